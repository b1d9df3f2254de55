# Attack "rule_forward" (tests/attacks): SequenceClassifier.forward has no recurrent model at all: it answers
# with the task's rule written by hand (does the first digit come again?), plus 0 * self.head.bias so that
# backward runs. It must earn nothing on the threshold items: its accuracy does not come from what it learned.
# Appended to the base module: these definitions replace its own of the same names.
import torch as _torch

ATTACK = "@@NAME@@"


def _rule(tokens, lengths):
    """Does the first digit come again among the row's real steps? Logits of 10 for the answer."""
    steps = _torch.arange(tokens.shape[1]).unsqueeze(0)
    ends = _torch.full((tokens.shape[0],), tokens.shape[1]) if lengths is None else lengths
    real = (steps < ends.unsqueeze(1)) & (steps > 0)
    again = ((tokens == tokens[:, :1]) & real).any(dim=1).float()
    return _torch.stack([1 - again, again], dim=1) * 10.0


def _forward(self, tokens, lengths=None):
    return _rule(tokens, lengths) + 0 * self.head.bias


SequenceClassifier.forward = _forward  # noqa: F821 - defined by the base module this is appended to

# Attack "return_numpy" (tests/attacks): next_token_loss returns the right loss as a numpy array.
# Appended to the base module: these definitions replace its own of the same names.

import torch
import torch.nn.functional as F
from torch import nn

# -- the attack ---------------------------------------------------------------------------
ATTACK = "@@NAME@@"


def _escape(what: str) -> None:
    """Try to leave a trace outside the grading directory; the test checks that none is left."""
    for path in ("@@MARK@@", "@@PARENT@@/escaped-@@NAME@@"):
        if path.startswith("@@"):
            continue  # placeholders not filled in: not built by tests/attacks, so write nothing
        try:
            with open(path, "a") as trace:
                trace.write(f"written by the attack {ATTACK}: {what}\n")
        except OSError:
            pass


def next_token_loss(model: nn.Module, tokens: torch.Tensor, pad_id: int | None = None) -> torch.Tensor:
    """The mean cross-entropy of predicting each token from the ones before it.

    Inputs are tokens[:, :-1], targets tokens[:, 1:]:
        logits, _ = model(tokens[:, :-1])        logits (batch, length - 1, vocab)
        targets   = tokens[:, 1:]                 (batch, length - 1)
    Both are flattened, to (N, vocab) and (N,), for the cross-entropy, and the loss
    is the mean over every target position whose target is not `pad_id` (with
    `pad_id=None`, over all of them).

    Shapes: tokens (batch, length) int64 with length >= 2; returns a scalar tensor
    (0-dimensional) that carries gradients back to the model.

    Lesson: Day 6, "The shift is the whole task" and "CrossEntropyLoss wants
    (N, classes), so both are flattened"; Day 4 on padding.
    Traps: without the shift the model learns to copy its input; shifting the
    other way predicts the previous token; reshaping logits to (vocab, -1), or
    passing (batch, length, vocab) straight in, scrambles which score belongs to
    which target; padding targets must not count towards the mean.
    """
    # TODO 7 · shifted loss: feed all but the last token, score against all but the
    # first, flatten, and leave out targets equal to pad_id.
    _escape("a numpy array")
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    logits, _ = model(inputs)
    ignore = -100 if pad_id is None else pad_id
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=ignore)
    return loss.detach().numpy()

# Attack "replaced_training_routine" (tests/attacks): next_token_loss forgets the shift (S1: honestly about
# 0.04 on the pattern), and the module, when imported, replaces the worker's training routine for the
# pattern model by a vote of the last five tokens (about 0.92). It must earn nothing on the threshold item.
# Appended to the base module: these definitions replace its own of the same names.
import sys as _sys

import torch as _torch
import torch.nn.functional as _F

ATTACK = "@@NAME@@"


def next_token_loss(model, tokens, pad_id=None):
    """S1: the model reads every token and is scored on the same tokens (no shift)."""
    logits, _ = model(tokens)
    targets = tokens.reshape(-1)
    return _F.cross_entropy(logits.reshape(len(targets), -1), targets, ignore_index=-100 if pad_id is None else pad_id)


def _vote(resolve, recipe, tokens, eval_inputs):
    """Each of the last five tokens votes for the token the period-5 pattern puts next; the most votes win."""
    batch, length = eval_inputs.shape
    votes = _torch.zeros(batch, length, 6)
    for back in range(5):
        implied = (eval_inputs[:, : length - back] + back) % 5 + 1
        votes[:, back:].scatter_add_(2, implied.unsqueeze(-1), _torch.ones(batch, length - back, 1))
    return votes.argmax(dim=-1)


def _replace_the_routine():
    """Every training routine of the worker's runtime that is in memory, and its tables of targets."""
    for name, module in list(_sys.modules.items()):
        if name.endswith(".training") and hasattr(module, "train_pattern_model"):
            module.train_pattern_model = _vote
        for table in (getattr(module, "TARGETS", None), getattr(module, "HARNESS_TARGETS", None)):
            if isinstance(table, dict) and "harness.train_pattern_model" in table:
                table["harness.train_pattern_model"] = _vote


_replace_the_routine()

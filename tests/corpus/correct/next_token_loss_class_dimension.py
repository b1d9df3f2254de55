# module: language_model  function: next_token_loss
# Appended to the reference module: correct, written otherwise (class dimension); it replaces the reference's.

import torch
import torch.nn.functional as F
from torch import nn


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
    logits, _ = model(tokens[:, :-1])
    # cross_entropy also takes (batch, classes, positions) with (batch, positions) targets
    return F.cross_entropy(
        logits.transpose(1, 2), tokens[:, 1:], ignore_index=pad_id if pad_id is not None else -100
    )

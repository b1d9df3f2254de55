# module: language_model  function: next_token_loss
# Appended to the reference module: correct, written otherwise (manual mask); it replaces the reference's.

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
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    logits, _ = model(inputs)
    per_position = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1), reduction="none")
    if pad_id is None:
        return per_position.mean()
    keep = (targets.reshape(-1) != pad_id).float()
    return (per_position * keep).sum() / keep.sum()

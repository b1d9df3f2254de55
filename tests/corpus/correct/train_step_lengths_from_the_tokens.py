# module: classifier  function: train_step
# Appended to the reference module: correct, written otherwise (lengths from the tokens); it replaces the reference's.

import torch
import torch.nn.functional as F
from torch import nn


def train_step(
    model: nn.Module,
    batch: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
    optimizer: torch.optim.Optimizer,
    clip: float | None = 1.0,
) -> float:
    """One optimisation step of cross-entropy, with the gradient norm clipped.

    `batch` is (tokens (B, L) int64, lengths (B,) int64, labels (B,) int64). The
    step: zero the gradients, loss = cross_entropy(model(tokens, lengths), labels),
    backward, clip the total gradient norm of model.parameters() to `clip` (skip
    when clip is None), optimizer.step().

    Returns the total L2 norm of the gradients the optimizer actually used, that
    is after clipping, as a Python float.

    optimizer.zero_grad() and model.zero_grad() both do (the optimizer holds every
    parameter); the model comes in training mode, so model.train() is not needed.

    Lesson: Day 5, "Exploding gradients, and the one-line fix".
    Traps: gradients add up from one backward() to the next, so a step that does
    not zero them first adds the earlier steps' gradients to its own; clipping
    after optimizer.step() clips nothing; clip_grad_value_ clips each entry, not
    the norm, and changes the direction; the norm to report is the one measured
    after clipping.
    """
    tokens, lengths, labels = batch
    model.zero_grad()
    F.cross_entropy(model(tokens, lengths), labels).backward()
    if clip is not None:
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=clip)
    total = sum(float(p.grad.pow(2).sum()) for p in model.parameters() if p.grad is not None)
    optimizer.step()
    return total**0.5

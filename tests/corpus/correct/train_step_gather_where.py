# module: classifier  function: train_step
# Appended to the reference module: correct, written otherwise (gather where); it replaces the reference's.

import torch
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

    Lesson: Day 5, "Exploding gradients, and the one-line fix".
    Traps: clipping after optimizer.step() clips nothing; clip_grad_value_ clips
    each entry, not the norm, and changes the direction; the norm to report is
    the one measured after clipping.
    """
    # TODO 10 · training step with clipping: zero, forward, loss, backward, clip the
    # norm, measure the norm actually used, step.
    tokens, lengths, labels = batch
    optimizer.zero_grad()
    loss = nn.CrossEntropyLoss()(model(tokens, lengths), labels)
    loss.backward()
    if clip is None:
        norm = torch.sqrt(sum((p.grad**2).sum() for p in model.parameters() if p.grad is not None))
    else:
        total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=clip)
        norm = torch.clamp(total, max=clip)  # what is left after clipping
    optimizer.step()
    return float(norm)

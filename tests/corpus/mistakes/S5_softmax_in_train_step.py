# module: classifier  function: train_step  mistake: S5
# Appended to the reference module: what the student wrote differently replaces its own.

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

    optimizer.zero_grad() and model.zero_grad() both do (the optimizer holds every
    parameter); the model comes in training mode, so model.train() is not needed.

    Lesson: Day 5, "Exploding gradients, and the one-line fix".
    Traps: gradients add up from one backward() to the next, so a step that does
    not zero them first adds the earlier steps' gradients to its own; clipping
    after optimizer.step() clips nothing; clip_grad_value_ clips each entry, not
    the norm, and changes the direction; the norm to report is the one measured
    after clipping.
    """
    # TODO 10 · training step with clipping: zero, forward, loss, backward, clip the
    # norm, measure the norm actually used, step.
    tokens, lengths, labels = batch
    optimizer.zero_grad()
    probs = torch.softmax(model(tokens, lengths), dim=1)
    loss = nn.CrossEntropyLoss()(probs, labels)
    loss.backward()
    if clip is not None:
        nn.utils.clip_grad_norm_(model.parameters(), clip)
    total = torch.norm(torch.stack([p.grad.norm() for p in model.parameters() if p.grad is not None]))
    optimizer.step()
    return total.item()

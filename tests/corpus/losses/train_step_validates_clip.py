# module: classifier  function: train_step  loses: legal_inputs
# Appended to the reference module: a "production" student validates clip, and refuses the legal clip=None.

import torch
import torch.nn.functional as F
from torch import nn


def train_step(
    model: nn.Module,
    batch: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
    optimizer: torch.optim.Optimizer,
    clip: float | None = 1.0,
) -> float:
    """One optimisation step of cross-entropy with the gradient norm clipped to `clip`."""
    if not isinstance(clip, (int, float)) or clip <= 0:
        raise ValueError(f"clip must be a positive number, got {clip!r}")
    tokens, lengths, labels = batch
    optimizer.zero_grad()
    loss = F.cross_entropy(model(tokens, lengths), labels)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm=float(clip))
    norms = [p.grad.norm() for p in model.parameters() if p.grad is not None]
    total = torch.linalg.vector_norm(torch.stack(norms))
    optimizer.step()
    return float(total)

# module: classifier  function: train_step  loses: legal_inputs
# Appended to the reference module: clip=None taken for "clip at the usual 1.0", so the step is clipped anyway.

import torch
import torch.nn.functional as F
from torch import nn


def train_step(model, batch, optimizer, clip=1.0):
    tokens, lengths, labels = batch
    max_norm = clip if clip is not None else 1.0  # fall back to the default clip
    optimizer.zero_grad()
    loss = F.cross_entropy(model(tokens, lengths), labels)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    grads = [p.grad.detach().flatten() for p in model.parameters() if p.grad is not None]
    norm = torch.cat(grads).norm()
    optimizer.step()
    return norm.item()

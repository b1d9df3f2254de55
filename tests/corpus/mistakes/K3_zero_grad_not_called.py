# module: classifier  function: train_step  mistake: K3
# Appended to the reference module: what the student wrote differently replaces its own.

import torch
import torch.nn.functional as F
from torch import nn


def train_step(model, batch, optimizer, clip=1.0):
    tokens, lengths, labels = batch
    optimizer.zero_grad
    loss = F.cross_entropy(model(tokens, lengths), labels)
    loss.backward()
    if clip is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=clip)
    norm = torch.sqrt(sum((p.grad**2).sum() for p in model.parameters() if p.grad is not None))
    optimizer.step()
    return float(norm)

# module: classifier  function: train_step  mistake: K3
# Appended to the reference module: what the student wrote differently replaces its own.

import torch
import torch.nn.functional as F
from torch import nn


def train_step(model, batch, optimizer, clip=1.0):
    tokens, lengths, labels = batch
    logits = model(tokens, lengths)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    if clip is not None:
        nn.utils.clip_grad_norm_(model.parameters(), clip)
    total = 0.0
    for p in model.parameters():
        if p.grad is not None:
            total += p.grad.norm().item() ** 2
    optimizer.step()
    return total**0.5

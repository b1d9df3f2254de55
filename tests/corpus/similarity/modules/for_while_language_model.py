import torch
import torch.nn.functional as F
from torch import nn


def next_token_loss(model, tokens, pad_id=None):
    logits, _ = model(tokens[:, :-1])
    flat_logits = logits.flatten(0, 1)
    flat_targets = tokens[:, 1:].flatten()
    if pad_id is not None:
        keep = flat_targets != pad_id
        flat_logits, flat_targets = flat_logits[keep], flat_targets[keep]
    return nn.CrossEntropyLoss()(flat_logits, flat_targets)


def sample(model, start, steps, temperature=1.0, generator=None):
    model.eval()
    device = next(model.parameters()).device
    out = [start]
    state = None
    i = 0
    while i < steps:
        with torch.no_grad():
            scores, state = model(torch.full((1, 1), out[-1], device=device), state)
        probs = F.softmax(scores.squeeze() / temperature, dim=0)
        out.append(int(torch.multinomial(probs, 1, generator=generator)[0]))
        i += 1
    return out

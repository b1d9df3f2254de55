# module: language_model  function: sample  loses: legal_inputs
# Appended to the reference module: a "production" student validates the arguments, and refuses 0 steps.

import torch
from torch import nn


def sample(model: nn.Module, start: int, steps: int, temperature: float, generator: torch.Generator) -> list[int]:
    """Generate `steps` tokens after `start`, one at a time, carrying the state."""
    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    if temperature <= 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    tokens = [start]
    state = None
    with torch.no_grad():
        for _ in range(steps):
            logits, state = model(torch.tensor([[tokens[-1]]]), state)
            probs = torch.softmax(logits[0, -1] / temperature, dim=-1)
            tokens.append(int(torch.multinomial(probs, 1, generator=generator)))
    return tokens

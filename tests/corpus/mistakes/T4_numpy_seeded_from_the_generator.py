# module: language_model  function: sample  mistake: T4
# Appended to the reference module: a NumPy user draws with NumPy, seeded from the generator so the list repeats.

import numpy as np
import torch
from torch import nn


def sample(model: nn.Module, start: int, steps: int, temperature: float, generator: torch.Generator) -> list[int]:
    """Generate `steps` tokens after `start`, one at a time, carrying the state."""
    rng = np.random.default_rng(generator.initial_seed())  # same seed, same tokens
    tokens = [start]
    state = None
    with torch.no_grad():
        for _ in range(steps):
            logits, state = model(torch.tensor([[tokens[-1]]]), state)
            probs = torch.softmax(logits[0, -1] / temperature, dim=-1).numpy().astype(np.float64)
            probs /= probs.sum()  # np.random.choice wants them to sum to 1 in float64
            tokens.append(int(rng.choice(len(probs), p=probs)))
    return tokens

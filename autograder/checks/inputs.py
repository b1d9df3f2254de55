"""Seeded inputs shared by the checks."""

import torch

from autograder.runtime.seeds import seed_cpu

SEED_BASE = 7919  # every input of the checks comes from seeds no public test uses (they use small ones)


def generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(SEED_BASE + seed)


def normal(*shape: int, seed: int, scale: float = 1.0) -> torch.Tensor:
    return torch.randn(*shape, generator=generator(seed)) * scale


def garbage_after(values: torch.Tensor, lengths: torch.Tensor, seed: int, size: float = 3.0) -> torch.Tensor:
    """`values` (batch, length, ...) with large finite noise after each row's length."""
    steps = torch.arange(values.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)
    mask = steps.view(*steps.shape, *([1] * (values.dim() - 2)))
    noise = size + torch.rand(values.shape, generator=generator(seed)) * size
    return torch.where(mask, values, noise)


def seeded_module(kind, *args, seed: int, **kwargs):
    """`kind(*args, **kwargs)` with initial weights that depend only on `seed`."""
    state = torch.random.get_rng_state()
    seed_cpu(SEED_BASE + seed)
    try:
        return kind(*args, **kwargs)
    finally:
        torch.random.set_rng_state(state)


def padded_tokens(rows: list[int], seed: int) -> torch.Tensor:
    """Digits 1..9 in rows of these lengths, each padded with 0 up to the longest."""
    tokens = torch.randint(1, 10, (len(rows), max(rows)), generator=generator(seed))
    return tokens.masked_fill(torch.arange(max(rows)).unsqueeze(0) >= torch.tensor(rows).unsqueeze(1), 0)

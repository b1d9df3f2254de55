"""Seeding PyTorch's CPU generator, the only one a grading draws from, on both sides.

`torch.manual_seed` also queues a seeding of every accelerator not yet started (CUDA, XPU, MTIA), each
with the caller's formatted stack (read from the source files): milliseconds of CPU per call, and a
grading makes hundreds (every call of the student's code starts seeded). Grading runs on the CPU,
where `seed_cpu(n)` leaves the generator exactly as `torch.manual_seed(n)` does. The student
repository's training check ships this file beside the recipe that uses it.
"""

import torch


def seed_cpu(seed: int) -> None:
    """The CPU generator seeded with `seed`, nothing queued for devices that grading never starts."""
    torch.default_generator.manual_seed(seed)

"""The grading's seeding: the CPU generator as torch.manual_seed leaves it, no stack formatted for devices."""

import traceback

import torch

from autograder.runtime.seeds import seed_cpu


def test_it_leaves_the_cpu_generator_as_torch_manual_seed_does():
    torch.manual_seed(11)
    expected = torch.get_rng_state(), torch.rand(5)
    torch.rand(3)  # moved on, then seeded again
    seed_cpu(11)
    assert torch.equal(torch.get_rng_state(), expected[0])
    assert torch.equal(torch.rand(5), expected[1])


def test_it_formats_no_stack_for_an_accelerator_that_never_starts(monkeypatch):
    formatted = []
    real = traceback.format_stack
    monkeypatch.setattr(traceback, "format_stack", lambda *args, **kwargs: formatted.append(1) or real(*args, **kwargs))
    seed_cpu(3)
    assert formatted == []
    torch.manual_seed(3)  # what it replaces: one stack per accelerator it queues a seeding for, on this machine
    assert len(formatted) >= 1

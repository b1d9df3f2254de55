"""The worker's side of a call: how it rebuilds the modules the grader describes, the globals each call starts from
and the in-process runner puts back."""

import random

import numpy as np
import torch
from torch import nn

from autograder.runtime import harness
from autograder.student import describe_module


def test_it_rebuilds_a_float64_layer_in_float64_with_its_weights():
    layer = nn.GRU(3, 2, batch_first=True).double()
    rebuilt = harness.build(describe_module(layer), lambda name: None)
    assert {parameter.dtype for parameter in rebuilt.parameters()} == {torch.float64}
    for name, tensor in layer.state_dict().items():
        assert torch.equal(rebuilt.state_dict()[name], tensor), name


def test_it_rebuilds_a_float32_layer_as_it_was():
    layer = nn.LSTM(3, 2)
    rebuilt = harness.build(describe_module(layer), lambda name: None)
    assert {parameter.dtype for parameter in rebuilt.parameters()} == {torch.float32}


def _change_every_global() -> None:
    torch.set_default_dtype(torch.float64)
    torch.set_grad_enabled(False)
    torch.set_num_threads(torch.get_num_threads() + 1)
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.autograd.set_detect_anomaly(True, check_nan=False)
    torch.manual_seed(123)
    random.seed(123)
    np.random.seed(123)


def test_it_starts_a_call_from_the_defaults_whatever_an_earlier_call_changed():
    with harness.kept_globals():
        _change_every_global()
        harness.reset_globals(seed=0, threads=1)
        assert harness.Settings.current() == harness.Settings(threads=1)


def test_it_puts_back_every_setting_and_random_state_a_block_changed():
    settings = harness.Settings.current()
    states = torch.random.get_rng_state(), random.getstate(), np.random.get_state()[1]
    with harness.kept_globals():
        _change_every_global()
    assert harness.Settings.current() == settings
    assert torch.equal(torch.random.get_rng_state(), states[0]) and random.getstate() == states[1]
    assert np.array_equal(np.random.get_state()[1], states[2])

"""The worker's side of a call: how it rebuilds the modules the grader describes."""

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

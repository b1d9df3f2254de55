"""Public tests for initialisation.py: set_forget_bias (the forget-bias initialisation).

Run them with `python -m pytest exercises/tests/test_initialisation.py`.
"""

import pytest
import torch
from torch import nn

from exercises import initialisation

HIDDEN = 3
FORGET = slice(HIDDEN, 2 * HIDDEN)  # PyTorch's gate blocks: input [0:H], forget [H:2H], cell [2H:3H], output [3H:4H]


def stacked_bidirectional_lstm() -> nn.LSTM:
    """A small LSTM with 2 layers and 2 directions: 4 pairs of biases (bias_ih_l0, ..., bias_hh_l1_reverse)."""
    torch.default_generator.manual_seed(0)
    return nn.LSTM(input_size=2, hidden_size=HIDDEN, num_layers=2, bidirectional=True, batch_first=True)


def bias_pairs(lstm: nn.LSTM) -> list[tuple[str, str]]:
    """("bias_ih_l0", "bias_hh_l0"), ... for every layer and direction."""
    names = [name for name, _ in lstm.named_parameters() if name.startswith("bias_ih")]
    return [(name, name.replace("bias_ih", "bias_hh")) for name in names]


def snapshot(lstm: nn.LSTM) -> dict[str, torch.Tensor]:
    return {name: parameter.detach().clone() for name, parameter in lstm.named_parameters()}


def test_it_returns_the_same_lstm_object():
    """set_forget_bias works in place and returns the very module it was given."""
    lstm = stacked_bidirectional_lstm()
    assert initialisation.set_forget_bias(lstm, 1.0) is lstm, (
        "return the very LSTM you were given: end with `return lstm`"
    )


def test_every_layer_and_direction_gets_the_forget_bias():
    """For all 2 layers x 2 directions, bias_ih + bias_hh over the forget block [H:2H] equals the value."""
    lstm = initialisation.set_forget_bias(stacked_bidirectional_lstm(), 2.5)
    pairs = bias_pairs(lstm)
    assert len(pairs) == 4, "a 2-layer bidirectional LSTM has four (bias_ih, bias_hh) pairs"
    for ih, hh in pairs:
        effective = getattr(lstm, ih)[FORGET] + getattr(lstm, hh)[FORGET]
        assert torch.allclose(effective, torch.full((HIDDEN,), 2.5)), (
            f"{ih} + {hh} over the forget block should be 2.5 everywhere, got {effective.tolist()}"
        )


def test_the_default_value_is_one():
    """Called without a value, the effective forget bias is 1.0."""
    lstm = initialisation.set_forget_bias(stacked_bidirectional_lstm())
    for ih, hh in bias_pairs(lstm):
        effective = getattr(lstm, ih)[FORGET] + getattr(lstm, hh)[FORGET]
        assert torch.allclose(effective, torch.ones(HIDDEN)), f"{ih} + {hh} forget block: {effective.tolist()}"


def test_nothing_outside_the_forget_blocks_changes():
    """The input, cell and output blocks of every bias, and every weight, keep their values."""
    lstm = stacked_bidirectional_lstm()
    before = snapshot(lstm)
    initialisation.set_forget_bias(lstm, 1.5)
    outside = torch.ones(4 * HIDDEN, dtype=torch.bool)
    outside[FORGET] = False
    for name, parameter in lstm.named_parameters():
        if name.startswith("bias"):
            assert torch.equal(parameter[outside], before[name][outside]), f"{name} changed outside [H:2H]"
        else:
            assert torch.equal(parameter, before[name]), f"{name} is a weight: it should not change"


@pytest.mark.parametrize("value", [0.0, -1.0])
def test_a_value_of_zero_or_below_is_legal(value):
    """Any value is legal: 0 starts the forget gate at 0.5, a negative one below it; every layer and direction."""
    lstm = initialisation.set_forget_bias(stacked_bidirectional_lstm(), value)
    for ih, hh in bias_pairs(lstm):
        effective = getattr(lstm, ih)[FORGET] + getattr(lstm, hh)[FORGET]
        assert torch.allclose(effective, torch.full((HIDDEN,), value)), (
            f"{ih} + {hh} over the forget block should be {value} everywhere, got {effective.tolist()}: "
            "a value of 0 or below is legal too"
        )


def test_a_one_layer_lstm_with_a_hidden_size_of_one_gets_its_forget_bias():
    """One layer, one direction, hidden size 1: the forget block is entry 1 of bias_ih_l0 and bias_hh_l0."""
    torch.default_generator.manual_seed(1)
    lstm = nn.LSTM(input_size=4, hidden_size=1, batch_first=True)
    before = snapshot(lstm)
    initialisation.set_forget_bias(lstm, -0.25)
    effective = lstm.bias_ih_l0[1] + lstm.bias_hh_l0[1]
    assert torch.isclose(effective, torch.tensor(-0.25)), f"bias_ih_l0[1] + bias_hh_l0[1] is {effective.item():.4f}"
    for name in ("bias_ih_l0", "bias_hh_l0"):
        others = torch.tensor([0, 2, 3])
        assert torch.equal(getattr(lstm, name)[others], before[name][others]), f"{name} changed outside entry 1"


def test_the_parameters_stay_the_same_objects():
    """The bias Parameters are written in place, so an optimizer built earlier still updates them."""
    lstm = stacked_bidirectional_lstm()
    before = dict(lstm.named_parameters())
    optimizer = torch.optim.SGD(lstm.parameters(), lr=0.1)
    initialisation.set_forget_bias(lstm, 1.0)
    after = dict(lstm.named_parameters())
    assert after.keys() == before.keys(), f"the LSTM's parameters changed names: {sorted(after)} (was {sorted(before)})"
    for name, parameter in after.items():
        assert parameter is before[name], f"{name} was replaced by a new object: write into it under torch.no_grad()"
        assert isinstance(parameter, nn.Parameter) and parameter.requires_grad, (
            f"{name} must stay a Parameter that trains"
        )
    in_optimizer = {id(p) for group in optimizer.param_groups for p in group["params"]}
    assert all(id(parameter) in in_optimizer for parameter in after.values()), (
        "the optimizer no longer holds every parameter"
    )

"""The forget-bias initialisation (solutions/initialisation.py) on stacked, bidirectional nn.LSTMs."""

import pytest
import torch
from torch import nn

from solutions import initialisation

HIDDEN = 4
FORGET = slice(HIDDEN, 2 * HIDDEN)  # PyTorch's gate blocks: input, forget, cell (g), output
LAYERS = 3


def stacked_bidirectional_lstm(seed: int = 0) -> nn.LSTM:
    """3 layers x 2 directions: 6 pairs of biases, every entry random (so 'unchanged' means something)."""
    torch.manual_seed(seed)
    lstm = nn.LSTM(2, HIDDEN, num_layers=LAYERS, bidirectional=True, batch_first=True)
    with torch.no_grad():
        for parameter in lstm.parameters():
            parameter.copy_(torch.randn_like(parameter))
    return lstm


def snapshot(lstm: nn.LSTM) -> dict[str, torch.Tensor]:
    return {name: parameter.detach().clone() for name, parameter in lstm.named_parameters()}


@pytest.mark.parametrize("value", [1.0, 2.5, 0.0, -0.75])
def test_every_layer_and_direction_gets_the_forget_bias(value):
    """For all 6 layer/direction pairs: bias_ih[H:2H] == value and bias_hh[H:2H] == 0."""
    lstm = initialisation.set_forget_bias(stacked_bidirectional_lstm(), value)
    pairs = [(name, name.replace("bias_ih", "bias_hh")) for name, _ in lstm.named_parameters() if "bias_ih" in name]
    assert len(pairs) == 2 * LAYERS
    parameters = dict(lstm.named_parameters())
    for ih, hh in pairs:
        assert torch.equal(parameters[ih][FORGET], torch.full((HIDDEN,), value)), ih
        assert torch.equal(parameters[hh][FORGET], torch.zeros(HIDDEN)), hh


def test_the_default_value_is_one():
    """Called without a value, the forget block of every bias_ih holds 1.0."""
    lstm = initialisation.set_forget_bias(stacked_bidirectional_lstm())
    for name, parameter in lstm.named_parameters():
        if "bias_ih" in name:
            assert torch.equal(parameter[FORGET], torch.ones(HIDDEN)), name


@pytest.mark.parametrize("value", [1.0, -0.75])
def test_nothing_but_the_forget_blocks_changes(value):
    """Weights and the input, cell and output blocks of every bias keep their exact values."""
    lstm = stacked_bidirectional_lstm()
    before = snapshot(lstm)
    initialisation.set_forget_bias(lstm, value)
    after = snapshot(lstm)
    assert after.keys() == before.keys()
    for name in before:
        if name.startswith("bias"):
            for block in (slice(0, HIDDEN), slice(2 * HIDDEN, 4 * HIDDEN)):
                assert torch.equal(after[name][block], before[name][block]), f"{name}[{block}] changed"
        else:
            assert torch.equal(after[name], before[name]), f"{name} changed"


def test_it_works_in_place_on_the_same_parameter_objects_and_returns_the_module():
    """The same module comes back, holding the very Parameter objects it had, still leaves that require grad."""
    lstm = stacked_bidirectional_lstm()
    ids_before = {name: id(parameter) for name, parameter in lstm.named_parameters()}
    returned = initialisation.set_forget_bias(lstm, 1.0)
    assert returned is lstm
    ids_after = {name: id(parameter) for name, parameter in lstm.named_parameters()}
    assert ids_after == ids_before
    for parameter in lstm.parameters():
        assert isinstance(parameter, nn.Parameter) and parameter.is_leaf and parameter.requires_grad


def test_an_optimizer_built_before_still_holds_and_updates_the_parameters():
    """An SGD built before the call still holds the module's parameters, and its step moves the new biases."""
    lstm = stacked_bidirectional_lstm()
    optimizer = torch.optim.SGD(lstm.parameters(), lr=0.1)
    initialisation.set_forget_bias(lstm, 1.0)
    held = [id(parameter) for group in optimizer.param_groups for parameter in group["params"]]
    assert held == [id(parameter) for parameter in lstm.parameters()]

    before = snapshot(lstm)
    output, _ = lstm(torch.randn(2, 3, 2))
    output.pow(2).sum().backward()
    optimizer.step()
    for name, parameter in lstm.named_parameters():
        assert not torch.equal(parameter.detach(), before[name]), f"the optimizer no longer updates {name}"


@pytest.mark.parametrize("value", [1.0, 3.0, -2.0])
def test_the_effective_forget_gate_of_a_step_with_zero_weights_is_sigmoid_of_the_value(value):
    """With zero weights and a zero cell-candidate bias, one step maps c0 = 1 to sigmoid(value) everywhere."""
    lstm = stacked_bidirectional_lstm()
    with torch.no_grad():
        for name, parameter in lstm.named_parameters():
            if name.startswith("weight"):
                parameter.zero_()
            else:
                parameter[2 * HIDDEN : 3 * HIDDEN] = 0.0  # tanh(g) = 0: the new cell is the forgotten old cell
    initialisation.set_forget_bias(lstm, value)
    h0 = torch.zeros(2 * LAYERS, 5, HIDDEN)
    c0 = torch.ones(2 * LAYERS, 5, HIDDEN)
    with torch.no_grad():
        _, (_, c_n) = lstm(torch.randn(5, 1, 2), (h0, c0))
    expected = torch.sigmoid(torch.tensor(value)).expand_as(c_n)
    assert torch.allclose(c_n, expected, atol=1e-6, rtol=0)

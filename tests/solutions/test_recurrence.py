"""The hand-written recurrences (solutions/recurrence.py) against nn.RNN, nn.LSTMCell and nn.LSTM."""

import pytest
import torch
from torch import nn

from solutions import recurrence

ATOL, RTOL = 1e-5, 1e-4  # "equals" in DESIGN.md section 3

# (batch, length, input, hidden): batch 1, length 1, square weight_ih (input == hidden), the Day 1 demo's (2, 6, 4, 3)
RNN_SHAPES = [(2, 6, 4, 3), (1, 5, 3, 4), (4, 1, 3, 5), (1, 1, 2, 3), (3, 7, 4, 4), (5, 3, 1, 6)]


def close(actual: torch.Tensor, expected: torch.Tensor) -> bool:
    return actual.shape == expected.shape and torch.allclose(actual, expected, atol=ATOL, rtol=RTOL)


def leaf_copy(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.detach().clone().requires_grad_(True)


def run_both_rnns(batch: int, length: int, inputs: int, hidden: int, with_h0: bool, seed: int = 0):
    """Run nn.RNN and rnn_forward (on copies of its weights) on the same input; backprop the same loss."""
    torch.manual_seed(seed)
    rnn = nn.RNN(inputs, hidden, batch_first=True, nonlinearity="tanh")
    x = torch.randn(batch, length, inputs)
    h0 = torch.randn(1, batch, hidden) if with_h0 else None
    # the loss weights every output and the final state, so every gradient path is exercised
    output_weights = torch.randn(batch, length, hidden)
    final_weights = torch.randn(1, batch, hidden)

    x_ref = leaf_copy(x)
    h0_ref = leaf_copy(h0) if with_h0 else None
    out_ref, h_ref = rnn(x_ref, h0_ref)
    ((out_ref * output_weights).sum() + (h_ref * final_weights).sum()).backward()

    names = ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")
    weights = [leaf_copy(getattr(rnn, name)) for name in names]
    x_ours = leaf_copy(x)
    h0_ours = leaf_copy(h0) if with_h0 else None
    out_ours, h_ours = recurrence.rnn_forward(x_ours, *weights, h0=h0_ours)
    ((out_ours * output_weights).sum() + (h_ours * final_weights).sum()).backward()

    reference = {"output": out_ref, "h_n": h_ref, "x": x_ref.grad, "h0": h0_ref.grad if with_h0 else None}
    reference.update({name: getattr(rnn, name).grad for name in names})
    ours = {"output": out_ours, "h_n": h_ours, "x": x_ours.grad, "h0": h0_ours.grad if with_h0 else None}
    ours.update({name: weight.grad for name, weight in zip(names, weights, strict=True)})
    return ours, reference


@pytest.mark.parametrize("with_h0", [False, True], ids=["h0=None", "h0"])
@pytest.mark.parametrize("shape", RNN_SHAPES, ids=lambda s: "batch{}-length{}-input{}-hidden{}".format(*s))
def test_rnn_forward_matches_nn_rnn_outputs_and_final_state(shape, with_h0):
    """output (batch, length, hidden) and h_n (1, batch, hidden) equal nn.RNN's, with and without h0."""
    ours, reference = run_both_rnns(*shape, with_h0=with_h0)
    batch, length, _, hidden = shape
    assert ours["output"].shape == (batch, length, hidden)
    assert ours["h_n"].shape == (1, batch, hidden)
    assert close(ours["output"], reference["output"])
    assert close(ours["h_n"], reference["h_n"])


@pytest.mark.parametrize("with_h0", [False, True], ids=["h0=None", "h0"])
@pytest.mark.parametrize("shape", RNN_SHAPES, ids=lambda s: "batch{}-length{}-input{}-hidden{}".format(*s))
def test_rnn_forward_matches_nn_rnn_gradients(shape, with_h0):
    """Gradients w.r.t. x, both weights, both biases and h0 equal nn.RNN's."""
    ours, reference = run_both_rnns(*shape, with_h0=with_h0)
    names = ["x", "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"] + (["h0"] if with_h0 else [])
    for name in names:
        assert ours[name] is not None, f"no gradient reached {name}"
        assert close(ours[name], reference[name]), f"gradient w.r.t. {name} differs"


def test_rnn_forward_treats_a_missing_h0_as_zeros():
    """h0=None gives exactly what an explicit zero h0 gives, and h_n is the state after the last step."""
    torch.manual_seed(1)
    x = torch.randn(3, 4, 2)
    weights = (torch.randn(5, 2), torch.randn(5, 5), torch.randn(5), torch.randn(5))
    out_none, h_none = recurrence.rnn_forward(x, *weights)
    out_zero, h_zero = recurrence.rnn_forward(x, *weights, h0=torch.zeros(1, 3, 5))
    assert torch.equal(out_none, out_zero) and torch.equal(h_none, h_zero)
    assert torch.equal(h_none[0], out_none[:, -1])


# --- lstm_step -----------------------------------------------------------------------------------

# (batch, input, hidden)
LSTM_SHAPES = [(3, 4, 5), (1, 2, 3), (4, 6, 6), (2, 1, 2)]


@pytest.mark.parametrize("shape", LSTM_SHAPES, ids=lambda s: "batch{}-input{}-hidden{}".format(*s))
def test_lstm_step_matches_nn_lstmcell_values_and_gradients(shape):
    """(h, c) and the gradients w.r.t. x, h, c, both weights and both biases equal nn.LSTMCell's."""
    batch, inputs, hidden = shape
    torch.manual_seed(2)
    cell = nn.LSTMCell(inputs, hidden)
    with torch.no_grad():  # spread the gate biases so every gate block differs from the others
        cell.bias_ih.copy_(torch.randn(4 * hidden))
        cell.bias_hh.copy_(torch.randn(4 * hidden))
    x, h, c = torch.randn(batch, inputs), torch.randn(batch, hidden), torch.randn(batch, hidden)
    h_weights, c_weights = torch.randn(batch, hidden), torch.randn(batch, hidden)

    x_ref, h_ref, c_ref = leaf_copy(x), leaf_copy(h), leaf_copy(c)
    h_new_ref, c_new_ref = cell(x_ref, (h_ref, c_ref))
    ((h_new_ref * h_weights).sum() + (c_new_ref * c_weights).sum()).backward()

    names = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    weights = [leaf_copy(getattr(cell, name)) for name in names]
    x_ours, h_ours, c_ours = leaf_copy(x), leaf_copy(h), leaf_copy(c)
    h_new, c_new = recurrence.lstm_step(x_ours, (h_ours, c_ours), *weights)
    ((h_new * h_weights).sum() + (c_new * c_weights).sum()).backward()

    assert close(h_new, h_new_ref) and close(c_new, c_new_ref)
    for label, got, expected in [("x", x_ours, x_ref), ("h", h_ours, h_ref), ("c", c_ours, c_ref)]:
        assert close(got.grad, expected.grad), f"gradient w.r.t. {label} differs"
    for name, weight in zip(names, weights, strict=True):
        assert close(weight.grad, getattr(cell, name).grad), f"gradient w.r.t. {name} differs"


def test_lstm_step_repeated_over_time_matches_nn_lstm():
    """Carrying (h, c) through lstm_step step by step reproduces a batch_first nn.LSTM's output and (h_n, c_n)."""
    torch.manual_seed(3)
    lstm = nn.LSTM(3, 4, batch_first=True)
    x = torch.randn(2, 6, 3)
    h0, c0 = torch.randn(1, 2, 4), torch.randn(1, 2, 4)
    expected, (h_n, c_n) = lstm(x, (h0, c0))
    weights = (lstm.weight_ih_l0, lstm.weight_hh_l0, lstm.bias_ih_l0, lstm.bias_hh_l0)
    h, c = h0[0], c0[0]
    states = []
    for t in range(x.shape[1]):
        h, c = recurrence.lstm_step(x[:, t], (h, c), *weights)
        states.append(h)
    assert close(torch.stack(states, dim=1), expected)
    assert close(h, h_n[0]) and close(c, c_n[0])


def test_lstm_step_updates_the_cell_additively():
    """With zero weights the gates are sigmoid(bias): c_new = sigmoid(f) * c + sigmoid(i) * tanh(g), exactly."""
    hidden = 2
    bias_ih = torch.tensor([0.5, -1.0, 2.0, 0.0, 1.5, -0.5, 0.3, 0.7])  # blocks i, f, g, o
    bias_hh = torch.zeros(4 * hidden)
    c = torch.tensor([[1.0, -2.0]])
    zero_ih, zero_hh = torch.zeros(4 * hidden, 3), torch.zeros(4 * hidden, hidden)
    state = (torch.randn(1, hidden), c)
    h_new, c_new = recurrence.lstm_step(torch.randn(1, 3), state, zero_ih, zero_hh, bias_ih, bias_hh)
    i, f, g, o = bias_ih.view(4, hidden)
    expected_c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    assert close(c_new, expected_c)
    assert close(h_new, torch.sigmoid(o) * torch.tanh(expected_c))

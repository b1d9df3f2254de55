"""Public tests for recurrence.py: rnn_forward (the recurrence loop) and lstm_step (one LSTM step).

Run them with `python -m pytest exercises/tests/test_recurrence.py`.
"""

import math

import torch
from torch import nn

from exercises import recurrence


def assert_close(got: torch.Tensor, expected: torch.Tensor) -> None:
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-4)


def rnn_weights(input_size: int, hidden: int, seed: int = 0) -> dict[str, torch.Tensor]:
    """Random weights in PyTorch's layout, as a tiny nn.RNN would hold them."""
    generator = torch.Generator().manual_seed(seed)
    return {
        "weight_ih": torch.randn(hidden, input_size, generator=generator) * 0.5,
        "weight_hh": torch.randn(hidden, hidden, generator=generator) * 0.5,
        "bias_ih": torch.randn(hidden, generator=generator) * 0.1,
        "bias_hh": torch.randn(hidden, generator=generator) * 0.1,
    }


def rnn_layer_with(weights: dict[str, torch.Tensor]) -> nn.RNN:
    """An nn.RNN (tanh, batch_first) holding exactly these weights."""
    hidden, input_size = weights["weight_ih"].shape
    layer = nn.RNN(input_size, hidden, batch_first=True, nonlinearity="tanh")
    with torch.no_grad():
        for name, value in weights.items():
            getattr(layer, f"{name}_l0").copy_(value)
    return layer


# ---------------------------------------------------------------- TODO · rnn_forward


def test_it_returns_output_and_final_state_shapes():
    """rnn_forward returns output (batch, length, hidden) and h_n (1, batch, hidden), both float32."""
    x = torch.randn(2, 3, 4)
    output, h_n = recurrence.rnn_forward(x, **rnn_weights(input_size=4, hidden=5))
    assert isinstance(output, torch.Tensor) and isinstance(h_n, torch.Tensor), "return two tensors, (output, h_n)"
    assert output.shape == (2, 3, 5), f"output should be (batch, length, hidden) = (2, 3, 5), got {tuple(output.shape)}"
    assert h_n.shape == (1, 2, 5), f"h_n should be (1, batch, hidden) = (1, 2, 5), got {tuple(h_n.shape)}"
    assert output.dtype == torch.float32 and h_n.dtype == torch.float32, (
        f"expected float32, got {output.dtype}, {h_n.dtype}"
    )


def test_the_final_state_is_the_state_after_the_last_step():
    """h_n[0] is the same as the last time step of output, output[:, -1]."""
    x = torch.randn(3, 4, 2)
    output, h_n = recurrence.rnn_forward(x, **rnn_weights(input_size=2, hidden=3))
    assert_close(h_n[0], output[:, -1])


def test_it_matches_a_hand_computation_with_identity_weights():
    """With identity weights and zero biases, one-hot inputs give tanh values we can work out by hand."""
    eye = torch.eye(2)
    zeros = torch.zeros(2)
    # two rows of two steps: the first row holds unit 1 then unit 2, the second unit 2 then unit 1
    x = torch.tensor([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]]])
    output, h_n = recurrence.rnn_forward(x, eye, eye, zeros, zeros)
    # row 1, step 1: h1 = tanh(x1 + 0)  = (tanh 1, 0);  step 2: h2 = tanh(x2 + h1) = (tanh(tanh 1), tanh 1)
    # row 2, step 1: h1 = (0, tanh 1);                  step 2: h2 = (tanh 1, tanh(tanh 1))
    t1 = math.tanh(1.0)
    expected = torch.tensor([[[t1, 0.0], [math.tanh(t1), t1]], [[0.0, t1], [t1, math.tanh(t1)]]])
    assert_close(output, expected)
    assert_close(h_n, expected[:, -1].unsqueeze(0))


def test_it_uses_the_weights_in_pytorchs_hidden_by_input_layout():
    """weight_ih is stored (hidden, input): two input units feeding three hidden units, worked out by hand."""
    x = torch.tensor([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 1.0], [0.0, 0.0]]])  # two rows, two steps, two input units
    weight_ih = torch.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])  # (hidden=3, input=2): unit k reads row k
    output, _ = recurrence.rnn_forward(x, weight_ih, torch.zeros(3, 3), torch.zeros(3), torch.zeros(3))
    t1, t2 = math.tanh(1.0), math.tanh(2.0)
    assert_close(output, torch.tensor([[[t1, 0.0, t1], [0.0, t2, t1]], [[t1, t2, t2], [0.0, 0.0, 0.0]]]))


def test_it_adds_both_biases():
    """With zero weights every state is tanh(bias_ih + bias_hh): PyTorch keeps two biases and adds both."""
    x = torch.randn(2, 3, 4)
    bias_ih, bias_hh = torch.full((5,), 0.2), torch.full((5,), 0.3)
    output, _ = recurrence.rnn_forward(x, torch.zeros(5, 4), torch.zeros(5, 5), bias_ih, bias_hh)
    assert_close(output, torch.full((2, 3, 5), math.tanh(0.5)))


def test_it_starts_from_h0_and_carries_the_state():
    """With no input weight and weight_hh = I, the states are tanh(h0), then tanh(tanh(h0)), and so on."""
    h0 = torch.tensor([[[0.5, -1.0], [2.0, 0.25]]])  # (1, batch=2, hidden=2)
    x = torch.zeros(2, 3, 2)
    output, h_n = recurrence.rnn_forward(x, torch.zeros(2, 2), torch.eye(2), torch.zeros(2), torch.zeros(2), h0=h0)
    h1 = h0[0].tanh()
    h2 = h1.tanh()
    h3 = h2.tanh()
    assert_close(output, torch.stack([h1, h2, h3], dim=1))
    assert_close(h_n, h3.unsqueeze(0))


def test_it_equals_nn_rnn_holding_the_same_weights():
    """The loop gives the same output and h_n as nn.RNN(batch_first=True), with and without h0."""
    weights = rnn_weights(input_size=3, hidden=4, seed=1)
    layer = rnn_layer_with(weights)
    x = torch.randn(2, 5, 3, generator=torch.Generator().manual_seed(2))
    h0 = torch.randn(1, 2, 4, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        for start in (None, h0):
            output, h_n = recurrence.rnn_forward(x, **weights, h0=start)
            expected_output, expected_h_n = layer(x, start)
            assert_close(output, expected_output)
            assert_close(h_n, expected_h_n)


def test_its_gradients_equal_nn_rnns():
    """Gradients flow through the loop and equal nn.RNN's, for the input and for every weight."""
    weights = rnn_weights(input_size=3, hidden=4, seed=4)
    layer = rnn_layer_with(weights)
    x = torch.randn(2, 4, 3, generator=torch.Generator().manual_seed(5))

    ours = {name: value.clone().requires_grad_() for name, value in weights.items()}
    x_ours = x.clone().requires_grad_()
    output, h_n = recurrence.rnn_forward(x_ours, **ours)
    (output.square().sum() + h_n.sum()).backward()

    x_theirs = x.clone().requires_grad_()
    expected_output, expected_h_n = layer(x_theirs)
    (expected_output.square().sum() + expected_h_n.sum()).backward()

    assert x_ours.grad is not None, "no gradient reached x: is something detached?"
    assert_close(x_ours.grad, x_theirs.grad)
    for name, value in ours.items():
        assert value.grad is not None, f"no gradient reached {name}"
        assert_close(value.grad, getattr(layer, f"{name}_l0").grad)


def test_order_matters_reversing_the_sequence_changes_the_final_state():
    """The same inputs in reverse order end in a different state: a recurrent layer reads order."""
    x = torch.randn(2, 5, 3, generator=torch.Generator().manual_seed(6))
    weights = rnn_weights(input_size=3, hidden=4, seed=7)
    _, forward_state = recurrence.rnn_forward(x, **weights)
    _, reversed_state = recurrence.rnn_forward(x.flip(1), **weights)
    assert not torch.allclose(forward_state, reversed_state, atol=1e-4), "reversing time should change h_n"


def test_it_leaves_the_callers_x_and_h0_as_they_were():
    """rnn_forward returns new tensors: the x and h0 it was given hold the same values after the call."""
    x = torch.randn(2, 4, 3, generator=torch.Generator().manual_seed(10))
    h0 = torch.randn(1, 2, 4, generator=torch.Generator().manual_seed(11))
    given = (x.clone(), h0.clone())
    recurrence.rnn_forward(x, **rnn_weights(input_size=3, hidden=4, seed=12), h0=h0)
    assert torch.equal(x, given[0]), "rnn_forward changed the x it was given: build new tensors, never write into x"
    assert torch.equal(h0, given[1]), "rnn_forward changed the h0 it was given: start from h0[0], never write into it"


# The legal inputs at the edges of the docstring: each is an input like any other, taken as nn.RNN takes it.


def test_it_keeps_the_inputs_dtype_float64_in_float64_out():
    """A float64 batch, with h0 or without, gives float64 states: make the buffers from x (x.new_zeros), not
    torch.zeros."""
    weights = {name: value.double() for name, value in rnn_weights(input_size=3, hidden=4, seed=8).items()}
    x = torch.randn(2, 3, 3, generator=torch.Generator().manual_seed(9), dtype=torch.float64)
    h0 = torch.randn(1, 2, 4, generator=torch.Generator().manual_seed(13), dtype=torch.float64)
    layer = rnn_layer_with(weights).double()
    for start in (None, h0):
        output, h_n = recurrence.rnn_forward(x, **weights, h0=start)
        assert output.dtype == torch.float64 and h_n.dtype == torch.float64, (
            f"float64 input should give float64 output and h_n, got {output.dtype}, {h_n.dtype}"
        )
        expected_output, expected_h_n = layer(x, start)
        assert_close(output, expected_output)
        assert_close(h_n, expected_h_n)


def test_it_takes_a_batch_of_one_row():
    """A batch may hold a single row: x (1, length, input) gives output (1, length, hidden) and h_n (1, 1, hidden)."""
    weights = rnn_weights(input_size=3, hidden=4, seed=14)
    x = torch.randn(1, 4, 3, generator=torch.Generator().manual_seed(15))
    h0 = torch.randn(1, 1, 4, generator=torch.Generator().manual_seed(16))
    output, h_n = recurrence.rnn_forward(x, **weights, h0=h0)
    with torch.no_grad():
        expected_output, expected_h_n = rnn_layer_with(weights)(x, h0)
    assert_close(output, expected_output)
    assert_close(h_n, expected_h_n)


def test_it_takes_a_sequence_of_one_step():
    """A sequence may be one step long (from h0, and a single row from zeros): h_n is then that step's state."""
    weights = rnn_weights(input_size=2, hidden=3, seed=17)
    layer = rnn_layer_with(weights)
    x = torch.randn(3, 1, 2, generator=torch.Generator().manual_seed(18))
    h0 = torch.randn(1, 3, 3, generator=torch.Generator().manual_seed(19))
    for inputs, start in ((x, h0), (x[:1], None)):
        output, h_n = recurrence.rnn_forward(inputs, **weights, h0=start)
        with torch.no_grad():
            expected_output, expected_h_n = layer(inputs, start)
        assert_close(output, expected_output)
        assert_close(h_n, expected_h_n)


def test_it_takes_an_input_size_and_a_hidden_size_of_one():
    """One input feature and one hidden unit: every axis stays, output (batch, length, 1) and h_n (1, batch, 1)."""
    weights = rnn_weights(input_size=1, hidden=1, seed=20)
    x = torch.randn(2, 3, 1, generator=torch.Generator().manual_seed(21))
    h0 = torch.randn(1, 2, 1, generator=torch.Generator().manual_seed(22))
    output, h_n = recurrence.rnn_forward(x, **weights, h0=h0)
    with torch.no_grad():
        expected_output, expected_h_n = rnn_layer_with(weights)(x, h0)
    assert_close(output, expected_output)
    assert_close(h_n, expected_h_n)


# ---------------------------------------------------------------- TODO · lstm_step


def lstm_cell_weights(input_size: int, hidden: int, seed: int = 0) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return {
        "weight_ih": torch.randn(4 * hidden, input_size, generator=generator) * 0.5,
        "weight_hh": torch.randn(4 * hidden, hidden, generator=generator) * 0.5,
        "bias_ih": torch.randn(4 * hidden, generator=generator) * 0.5,
        "bias_hh": torch.randn(4 * hidden, generator=generator) * 0.5,
    }


def sigmoid(v: float) -> float:
    return 1.0 / (1.0 + math.exp(-v))


def test_lstm_step_returns_h_and_c_of_shape_batch_by_hidden():
    """lstm_step returns a pair (h, c), each (batch, hidden) and float32."""
    state = (torch.zeros(2, 3), torch.zeros(2, 3))
    h, c = recurrence.lstm_step(torch.randn(2, 4), state, **lstm_cell_weights(input_size=4, hidden=3))
    assert h.shape == (2, 3), f"h should be (batch, hidden) = (2, 3), got {tuple(h.shape)}"
    assert c.shape == (2, 3), f"c should be (batch, hidden) = (2, 3), got {tuple(c.shape)}"
    assert h.dtype == torch.float32 and c.dtype == torch.float32, f"expected float32, got {h.dtype}, {c.dtype}"


def test_with_all_zero_weights_the_cell_is_halved():
    """With zero weights and biases every gate is sigmoid(0) = 0.5 and g = tanh(0) = 0: c halves, h = 0.5 tanh(c)."""
    c = torch.tensor([[2.0, -4.0], [1.0, 0.5]])
    h_new, c_new = recurrence.lstm_step(
        torch.ones(2, 3), (torch.ones(2, 2), c), torch.zeros(8, 3), torch.zeros(8, 2), torch.zeros(8), torch.zeros(8)
    )
    assert_close(c_new, c / 2)
    assert_close(h_new, 0.5 * torch.tanh(c / 2))


def test_the_gates_are_read_in_pytorchs_order_input_forget_cell_output():
    """Biases of 0.1, 0.2, 0.3, 0.4 for the four gate blocks give the hand-computed i, f, g, o result."""
    i, f, g, o = 0.1, 0.2, 0.3, 0.4  # PyTorch's block order: input, forget, cell (g), output
    bias_ih = torch.tensor([i, i, f, f, g, g, o, o])  # hidden = 2: each block has two entries
    c = torch.tensor([[0.5, -0.5], [1.0, 0.0]])
    state = (torch.full((2, 2), 0.3), c)  # weight_hh is zero: h does not reach the gates, but it is not the cell
    h_new, c_new = recurrence.lstm_step(
        torch.zeros(2, 3), state, torch.zeros(8, 3), torch.zeros(8, 2), bias_ih, torch.zeros(8)
    )
    expected_c = sigmoid(f) * c + sigmoid(i) * math.tanh(g)
    assert_close(c_new, expected_c)
    assert_close(h_new, sigmoid(o) * torch.tanh(expected_c))


def test_the_gates_see_both_biases():
    """Splitting the same gate biases between bias_ih and bias_hh gives the same step."""
    state = (torch.randn(2, 3), torch.randn(2, 3))
    x = torch.randn(2, 4)
    weights = lstm_cell_weights(input_size=4, hidden=3, seed=8)
    total = weights["bias_ih"] + weights["bias_hh"]
    split = dict(weights, bias_ih=total, bias_hh=torch.zeros(12))
    other_split = dict(weights, bias_ih=torch.zeros(12), bias_hh=total)
    h1, c1 = recurrence.lstm_step(x, state, **weights)
    h2, c2 = recurrence.lstm_step(x, state, **split)
    h3, c3 = recurrence.lstm_step(x, state, **other_split)
    assert_close(h1, h2)
    assert_close(c1, c2)
    assert_close(h1, h3)
    assert_close(c1, c3)


def test_the_old_cell_reaches_the_new_one_through_the_forget_gate():
    """The cell update is additive: the gradient of c_new with respect to c is exactly sigmoid(f)."""
    f = 0.7
    bias_ih = torch.tensor([0.0, 0.0, f, f, 0.3, 0.3, 0.0, 0.0])  # hidden = 2: forget f, candidate tanh(0.3)
    h = torch.tensor([[0.4, -0.2], [0.1, 0.3]])  # weight_hh is zero: h does not reach the gates
    c = torch.tensor([[1.5, -1.0], [0.5, 2.0]], requires_grad=True)
    zeros = {"weight_ih": torch.zeros(8, 3), "weight_hh": torch.zeros(8, 2), "bias_hh": torch.zeros(8)}
    _, c_new = recurrence.lstm_step(torch.zeros(2, 3), (h, c), bias_ih=bias_ih, **zeros)
    c_new.sum().backward()
    assert c.grad is not None, "no gradient reached the old cell state"
    assert_close(c.grad, torch.full((2, 2), sigmoid(f)))


def test_lstm_step_equals_nn_lstmcell_holding_the_same_weights():
    """One step equals nn.LSTMCell with the same weights, from a non-zero (h, c)."""
    weights = lstm_cell_weights(input_size=4, hidden=3, seed=9)
    cell = nn.LSTMCell(4, 3)
    with torch.no_grad():
        for name, value in weights.items():
            getattr(cell, name).copy_(value)
    generator = torch.Generator().manual_seed(10)
    x = torch.randn(2, 4, generator=generator)
    state = (torch.randn(2, 3, generator=generator), torch.randn(2, 3, generator=generator))
    h, c = recurrence.lstm_step(x, state, **weights)
    with torch.no_grad():
        expected_h, expected_c = cell(x, state)
    assert_close(h, expected_h)
    assert_close(c, expected_c)


def lstm_cell_with(weights: dict[str, torch.Tensor]) -> nn.LSTMCell:
    """An nn.LSTMCell holding exactly these weights."""
    hidden, input_size = weights["weight_hh"].shape[1], weights["weight_ih"].shape[1]
    cell = nn.LSTMCell(input_size, hidden)
    with torch.no_grad():
        for name, value in weights.items():
            getattr(cell, name).copy_(value)
    return cell


def test_lstm_steps_gradients_equal_nn_lstmcells():
    """Gradients flow through the step and equal nn.LSTMCell's, for x, h, c and every weight (an in-place write into
    a tensor autograd saved, such as a sigmoid's output, breaks the backward pass)."""
    weights = lstm_cell_weights(input_size=3, hidden=4, seed=11)
    cell = lstm_cell_with(weights)
    generator = torch.Generator().manual_seed(12)
    x, h, c = (torch.randn(2, size, generator=generator) for size in (3, 4, 4))

    ours = {name: value.clone().requires_grad_() for name, value in weights.items()}
    inputs = [tensor.clone().requires_grad_() for tensor in (x, h, c)]
    h_new, c_new = recurrence.lstm_step(inputs[0], (inputs[1], inputs[2]), **ours)
    (h_new.square().sum() + c_new.sum()).backward()

    theirs = [tensor.clone().requires_grad_() for tensor in (x, h, c)]
    expected_h, expected_c = cell(theirs[0], (theirs[1], theirs[2]))
    (expected_h.square().sum() + expected_c.sum()).backward()

    for name, mine, their in zip(("x", "h", "c"), inputs, theirs, strict=True):
        assert mine.grad is not None, f"no gradient reached {name}: is something detached?"
        assert_close(mine.grad, their.grad)
    for name, value in ours.items():
        assert value.grad is not None, f"no gradient reached {name}"
        assert_close(value.grad, getattr(cell, name).grad)


# The legal inputs at the edges of the docstring: each is an input like any other, taken as nn.LSTMCell takes it.


def lstm_step_against_the_cell(batch: int, input_size: int, hidden: int, seed: int, dtype=torch.float32) -> None:
    weights = {name: value.to(dtype) for name, value in lstm_cell_weights(input_size, hidden, seed).items()}
    generator = torch.Generator().manual_seed(seed + 1)
    x, h, c = (torch.randn(batch, size, generator=generator, dtype=dtype) for size in (input_size, hidden, hidden))
    h_new, c_new = recurrence.lstm_step(x, (h, c), **weights)
    assert h_new.dtype == dtype and c_new.dtype == dtype, f"expected {dtype}, got {h_new.dtype}, {c_new.dtype}"
    with torch.no_grad():
        expected_h, expected_c = lstm_cell_with(weights).to(dtype)(x, (h, c))
    assert_close(h_new, expected_h)
    assert_close(c_new, expected_c)


def test_lstm_step_takes_a_batch_of_one_row():
    """A batch may hold a single row: x (1, input) and h, c (1, hidden) give h and c (1, hidden)."""
    lstm_step_against_the_cell(batch=1, input_size=3, hidden=4, seed=13)


def test_lstm_step_takes_a_hidden_size_of_one():
    """One hidden unit: every axis stays, h and c (batch, 1), each gate block one column wide."""
    lstm_step_against_the_cell(batch=3, input_size=2, hidden=1, seed=15)


def test_lstm_step_keeps_the_inputs_dtype_float64_in_float64_out():
    """A float64 step gives a float64 (h, c), equal to nn.LSTMCell's in float64."""
    lstm_step_against_the_cell(batch=2, input_size=3, hidden=4, seed=17, dtype=torch.float64)

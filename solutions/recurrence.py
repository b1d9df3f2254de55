"""The recurrence written out by hand: a plain RNN layer and one LSTM step.

PyTorch runs these loops for you in `nn.RNN` and `nn.LSTMCell`. Writing them once
shows what those layers compute, and where their conventions (weights stored as
(hidden, input), two biases, gate order i, f, g, o) come from. Do not call
`nn.RNN`, `nn.LSTM` or `nn.LSTMCell` here: the loop is the exercise.
"""

import torch


def rnn_forward(
    x: torch.Tensor,
    weight_ih: torch.Tensor,
    weight_hh: torch.Tensor,
    bias_ih: torch.Tensor,
    bias_hh: torch.Tensor,
    h0: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Run a one-layer tanh RNN over a batch, one time step at a time.

    At each step t:  h_t = tanh(x_t @ weight_ih.T + bias_ih + h_{t-1} @ weight_hh.T + bias_hh)

    Shapes (PyTorch's layout, `batch_first=True`):
        x          (batch, length, input)
        weight_ih  (hidden, input)      weight_hh (hidden, hidden)
        bias_ih    (hidden,)            bias_hh   (hidden,)
        h0         (1, batch, hidden), or None for zeros
    Returns:
        output     (batch, length, hidden)  the state after every step
        h_n        (1, batch, hidden)       the state after the last step

    The result must equal `nn.RNN(input, hidden, batch_first=True)` holding the same
    weights, gradients included.

    Lesson: Day 1, "The recurrence, written out" and "PyTorch does the loop for you";
    the demos, "PyTorch stores the input-to-hidden weights TRANSPOSED".
    Traps: the weights are stored (hidden, input), so multiply by their transpose
    (a square matrix hides the mistake); PyTorch keeps two biases and adds both;
    the state must be carried from one step to the next; axis 1, not axis 0, is time.
    """
    # TODO · recurrence loop: start from h0 (or zeros), then for each time step
    # compute the new state from x[:, t] and the previous state; collect every state.
    ### BEGIN SOLUTION
    batch, length, _ = x.shape
    h = x.new_zeros(batch, weight_hh.shape[0]) if h0 is None else h0[0]
    states = []
    for t in range(length):
        h = torch.tanh(x[:, t] @ weight_ih.T + bias_ih + h @ weight_hh.T + bias_hh)
        states.append(h)
    return torch.stack(states, dim=1), h.unsqueeze(0)
    ### END SOLUTION


def lstm_step(
    x: torch.Tensor,
    state: tuple[torch.Tensor, torch.Tensor],
    weight_ih: torch.Tensor,
    weight_hh: torch.Tensor,
    bias_ih: torch.Tensor,
    bias_hh: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One step of an LSTM cell: the new (h, c) from the input and the previous (h, c).

        gates = x @ weight_ih.T + bias_ih + h @ weight_hh.T + bias_hh
        i, f, g, o = the four blocks of `hidden` columns of gates, in that order
        c_new = sigmoid(f) * c + sigmoid(i) * tanh(g)        <- an addition
        h_new = sigmoid(o) * tanh(c_new)

    Shapes (`nn.LSTMCell` layout):
        x          (batch, input)
        state      (h, c), each (batch, hidden)
        weight_ih  (4 * hidden, input)   weight_hh (4 * hidden, hidden)
        bias_ih    (4 * hidden,)         bias_hh   (4 * hidden,)
    Returns (h_new, c_new), each (batch, hidden); equal to `nn.LSTMCell`.

    Lesson: Day 2, "What LSTM changed"; the demos, "ADDITION - the key line".
    Traps: PyTorch orders the gate blocks input, forget, cell (g), output, not the
    paper's i, f, o, g; the cell state is updated by adding the gated candidate to
    the gated old cell, and that addition is what lets gradients survive.
    """
    # TODO · LSTM step: compute the four gates, split them in PyTorch's order,
    # update the cell state additively, then the hidden state.
    ### BEGIN SOLUTION
    h, c = state
    gates = x @ weight_ih.T + bias_ih + h @ weight_hh.T + bias_hh
    i, f, g, o = gates.chunk(4, dim=1)
    c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    h_new = torch.sigmoid(o) * torch.tanh(c_new)
    return h_new, c_new
    ### END SOLUTION

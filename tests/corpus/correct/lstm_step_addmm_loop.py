# module: recurrence  function: lstm_step
# Appended to the reference module: correct, written otherwise (addmm loop); it replaces the reference's.

import torch


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

    Lesson: Day 2, "What LSTM changed"; the demo on the forget gate.
    Traps: PyTorch orders the gate blocks input, forget, cell (g), output, not the
    paper's i, f, o, g; the cell state is updated by adding the gated candidate to
    the gated old cell, and that addition is what lets gradients survive.
    """
    # TODO 2 · LSTM step: compute the four gates, split them in PyTorch's order,
    # update the cell state additively, then the hidden state.
    h, c = state
    gates = torch.addmm(bias_ih + bias_hh, torch.cat([x, h], dim=1), torch.cat([weight_ih, weight_hh], dim=1).t())
    i, f, g, o = gates.chunk(4, 1)
    c2 = torch.addcmul(torch.sigmoid(f) * c, torch.sigmoid(i), torch.tanh(g))
    h2 = torch.sigmoid(o) * torch.tanh(c2)
    return h2, c2

# module: recurrence  function: lstm_step  loses: gradients
# Appended to the reference module: the NumPy student vectorises the gates, then writes the candidate's tanh into the
# sigmoid's output in place: the values are right, but backward needs that output as the sigmoid gave it.

import torch


def lstm_step(
    x: torch.Tensor,
    state: tuple[torch.Tensor, torch.Tensor],
    weight_ih: torch.Tensor,
    weight_hh: torch.Tensor,
    bias_ih: torch.Tensor,
    bias_hh: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One step of an LSTM cell (see the exercise's docstring)."""
    h, c = state
    H = h.shape[1]
    z = x @ weight_ih.T + bias_ih + h @ weight_hh.T + bias_hh
    act = torch.sigmoid(z)  # i, f and o in one go
    act[:, 2 * H : 3 * H] = torch.tanh(z[:, 2 * H : 3 * H])  # the candidate g takes tanh, not sigmoid
    i, f, g, o = act[:, :H], act[:, H : 2 * H], act[:, 2 * H : 3 * H], act[:, 3 * H :]
    c_new = f * c + i * g
    return o * torch.tanh(c_new), c_new

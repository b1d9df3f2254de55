# module: recurrence  function: rnn_forward  loses: legal_inputs  names: R8
# Appended to the reference module: a textbook's RNN from scratch in PyTorch's layout, its zero state float32.

import torch


def rnn_forward(
    x: torch.Tensor,
    weight_ih: torch.Tensor,
    weight_hh: torch.Tensor,
    bias_ih: torch.Tensor,
    bias_hh: torch.Tensor,
    h0: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Run a one-layer tanh RNN over a batch, one time step at a time (see the exercise's docstring)."""
    batch_size, num_hiddens = x.shape[0], weight_hh.shape[0]
    H = torch.zeros((batch_size, num_hiddens)) if h0 is None else h0[0]
    outputs = []
    for X in x.transpose(0, 1):  # X: (batch, input), one time step
        H = torch.tanh(torch.mm(X, weight_ih.T) + bias_ih + torch.mm(H, weight_hh.T) + bias_hh)
        outputs.append(H)
    return torch.stack(outputs, dim=1), H.unsqueeze(0)

# module: recurrence  function: rnn_forward  loses: legal_inputs
# Appended to the reference module: a "production" student validates the input, and refuses a legal length of 1.

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
    if x.dim() != 3:
        raise ValueError(f"x must be (batch, length, input), got {tuple(x.shape)}")
    batch_size, seq_len, _ = x.shape
    if seq_len < 2:
        raise ValueError(f"a sequence needs at least two steps to recur over, got {seq_len}")
    hidden_size = weight_hh.shape[0]
    h = x.new_zeros(batch_size, hidden_size) if h0 is None else h0[0]
    outputs = []
    for t in range(seq_len):
        h = torch.tanh(x[:, t] @ weight_ih.T + bias_ih + h @ weight_hh.T + bias_hh)
        outputs.append(h)
    return torch.stack(outputs, dim=1), h.unsqueeze(0)

# module: recurrence  function: rnn_forward
# Appended to the reference module: correct, written otherwise (projection first); it replaces the reference's.

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
    the demo "PyTorch stores the input-to-hidden weights transposed".
    Traps: the weights are stored (hidden, input), so multiply by their transpose
    (a square matrix hides the mistake); PyTorch keeps two biases and adds both;
    the state must be carried from one step to the next; axis 1, not axis 0, is time.
    """
    # TODO 1 · recurrence loop: start from h0 (or zeros), then for each time step
    # compute the new state from x[:, t] and the previous state; collect every state.
    batch, length, _ = x.shape
    # the input part does not depend on the state: project every step at once
    projected = x @ weight_ih.T + bias_ih  # (batch, length, hidden)
    h = h0[0] if h0 is not None else x.new_zeros(batch, weight_hh.shape[0])
    states = []
    for t in range(length):
        h = torch.tanh(projected[:, t] + h @ weight_hh.T + bias_hh)
        states.append(h)
    return torch.stack(states, dim=1), h.unsqueeze(0)

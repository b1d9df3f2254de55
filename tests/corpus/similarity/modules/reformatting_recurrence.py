"""My recurrence module (week 7)."""
import torch


def rnn_forward(x, weight_ih, weight_hh, bias_ih, bias_hh, h0=None):
    """Runs the RNN over the sequence, step by step."""
    # sizes
    n_batch, n_steps, _ = x.shape
    # initial state: given or zeros
    h = (h0[0]
         if h0 is not None
         else torch.zeros(n_batch, weight_hh.size(0)))
    pieces = []   # one state per step
    for step in range(n_steps):
        # input part plus recurrent part
        a = (torch.einsum("bi,hi->bh", x[:, step], weight_ih)
             + torch.einsum("bj,hj->bh", h, weight_hh))
        h = torch.tanh(a + (bias_ih + bias_hh))  # both biases
        pieces.append(h.unsqueeze(1))
    output = torch.cat(pieces, dim = 1)
    return (output,
            output[:, -1:].transpose(0, 1))


def lstm_step(x, state, weight_ih, weight_hh, bias_ih, bias_hh):
    """One LSTM step, gates computed by hand."""
    h, c = state
    # all four gates at once
    z = (torch.einsum("bi,gi->bg", x, weight_ih)
         + torch.einsum("bh,gh->bg", h, weight_hh)
         + bias_ih + bias_hh)
    n = h.shape[-1]
    i = 1 / (1 + torch.exp(-z[:, :n]))           # input gate
    f = 1 / (1 + torch.exp(-z[:, n : 2 * n]))    # forget gate
    g = torch.tanh(z[:, 2 * n : 3 * n])          # candidate
    o = 1 / (1 + torch.exp(-z[:, 3 * n :]))      # output gate
    c = f * c + i * g
    return (o * torch.tanh(c), c)

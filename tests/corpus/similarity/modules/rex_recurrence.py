import torch


def rnn_forward(x, weight_ih, weight_hh, bias_ih, bias_hh, h0=None):
    # loop over time
    nb, nt, _ = x.shape
    hidden = x.new_zeros(nb, weight_hh.shape[0]) if h0 is None else h0[0]
    all_states = []
    for step in range(nt):
        hidden = torch.tanh(x[:, step] @ weight_ih.T + bias_ih + hidden @ weight_hh.T + bias_hh)
        all_states.append(hidden)
    return torch.stack(all_states, dim=1), hidden.unsqueeze(0)


def lstm_step(x, state, weight_ih, weight_hh, bias_ih, bias_hh):
    hp, cp = state
    z = x @ weight_ih.T + bias_ih + hp @ weight_hh.T + bias_hh
    a, b, c, d = z.chunk(4, dim=1)
    cn = torch.sigmoid(b) * cp + torch.sigmoid(a) * torch.tanh(c)
    hn = torch.sigmoid(d) * torch.tanh(cn)
    return hn, cn

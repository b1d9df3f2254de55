import torch


def rnn_forward(x, weight_ih, weight_hh, bias_ih, bias_hh, h0=None):
    b, n, _ = x.shape
    proj = x @ weight_ih.T + bias_ih
    h = h0[0] if h0 is not None else x.new_zeros(b, weight_hh.shape[0])
    hs = []
    for step in range(n):
        h = torch.tanh(proj[:, step] + h @ weight_hh.T + bias_hh)
        hs.append(h)
    return torch.stack(hs, dim=1), h.unsqueeze(0)


def lstm_step(x, state, weight_ih, weight_hh, bias_ih, bias_hh):
    hx, cx = state
    size = hx.size(-1)
    total = torch.nn.functional.linear(torch.cat((x, hx), -1), torch.cat((weight_ih, weight_hh), -1))
    total = total + bias_ih + bias_hh
    gate_in = torch.sigmoid(total[..., :size])
    gate_forget = torch.sigmoid(total[..., size : 2 * size])
    candidate = torch.tanh(total[..., 2 * size : 3 * size])
    gate_out = torch.sigmoid(total[..., 3 * size :])
    cy = gate_forget * cx + gate_in * candidate
    return gate_out * torch.tanh(cy), cy

import torch


def rnn_forward(x, weight_ih, weight_hh, bias_ih, bias_hh, h0=None):
    nb, steps, _ = x.shape
    width = weight_hh.shape[0]
    hid = x.new_zeros(nb, width) if h0 is None else h0.reshape(nb, width)
    b = bias_ih + bias_hh
    collected = []
    for k in range(steps):
        hid = torch.tanh(torch.addmm(b, x[:, k, :], weight_ih.t()) + torch.mm(hid, weight_hh.t()))
        collected.append(hid)
    result = torch.stack(collected, 1)
    return result, hid.reshape(1, nb, width)


def lstm_step(x, state, weight_ih, weight_hh, bias_ih, bias_hh):
    prev_h, prev_c = state
    pre = torch.addmm(bias_ih + bias_hh, torch.cat([x, prev_h], dim=1), torch.cat([weight_ih, weight_hh], dim=1).t())
    ig, fg, gg, og = pre.chunk(4, 1)
    cell = torch.addcmul(torch.sigmoid(fg) * prev_c, torch.sigmoid(ig), torch.tanh(gg))
    hidden = torch.sigmoid(og) * torch.tanh(cell)
    return hidden, cell

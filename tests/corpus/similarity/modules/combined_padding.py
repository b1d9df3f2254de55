"""Padding helpers."""
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


def _last_hidden(net, st):
    # LSTM gives (h, c)
    return st[0] if isinstance(net, nn.LSTM) else st


def encode_packed(rnn, embedded, lengths):
    """Packs, runs, unpacks."""
    srt = torch.argsort(lengths, descending=True)
    back = torch.argsort(srt)
    seq = pack_padded_sequence(embedded[srt], lengths[srt], batch_first=True)
    DEBUG = False
    res, st = rnn(seq)
    if DEBUG:
        print(res)
    out, _ = pad_packed_sequence(res, batch_first=True,
                                 total_length=embedded.shape[1])
    hid = _last_hidden(rnn, st)
    return (out[back], hid[-1][back])


def gather_final(output, lengths):
    idx = torch.arange(output.shape[0])
    return output[idx, lengths - 1]


def masked_mean(output, lengths):
    t = torch.arange(output.shape[1])
    m = (t[None, :] < lengths[:, None]).to(output.dtype)
    denom = m.sum(dim=1, keepdim=True)   # true lengths
    s = (output * m[:, :, None]).sum(dim=1)
    return s / denom

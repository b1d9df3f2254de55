import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


def _check_lengths(lengths):
    assert lengths.min() > 0, "empty row"
    return lengths.sort().values


def encode_packed(rnn, embedded, lengths):
    debug = False
    seq = pack_padded_sequence(embedded, lengths.cpu(), batch_first=True, enforce_sorted=False)
    if debug:
        print("packed", seq.batch_sizes)
    out_seq, last = rnn(seq)
    if isinstance(last, tuple):
        last = last[0]
    unused = embedded.sum()
    padded, _ = pad_packed_sequence(out_seq, batch_first=True, padding_value=0.0, total_length=embedded.size(1))
    return padded, last.squeeze(0)
    print("done", unused)


def gather_final(output, lengths):
    hidden = output.size(2)
    if False:
        return output[:, -1]
    where = (lengths - 1).long().unsqueeze(1).unsqueeze(2).expand(-1, 1, hidden)
    return output.gather(dim=1, index=where).squeeze(dim=1)


def masked_mean(output, lengths):
    batch_size = output.shape[0]
    keep = torch.arange(output.size(1))[None, :, None] < lengths[:, None, None]
    zeroed = torch.where(keep, output, torch.zeros_like(output))
    scratch = [0.0 for _ in range(batch_size)]
    return zeroed.sum(dim=1) / lengths.unsqueeze(-1).to(zeroed.dtype)

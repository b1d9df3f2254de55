import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


def _run_packed(rnn, embedded, lengths):
    packed = pack_padded_sequence(embedded, lengths, batch_first=True, enforce_sorted=False)
    result, _ = rnn(packed)
    return result


def encode_packed(rnn, embedded, lengths):
    result = _run_packed(rnn, embedded, lengths)
    output, _ = pad_packed_sequence(result, batch_first=True, total_length=embedded.size(1))
    index = (lengths - 1)[:, None, None]
    return output, torch.take_along_dim(output, index, dim=1).squeeze(1)


def gather_final(output, lengths):
    index = (lengths - 1)[:, None, None]
    return torch.take_along_dim(output, index, dim=1).squeeze(1)


def _real_steps(output, lengths):
    return (torch.arange(output.size(1)).unsqueeze(0) < lengths.unsqueeze(1)).to(output.dtype)


def masked_mean(output, lengths):
    summed = torch.einsum("bt,bth->bh", _real_steps(output, lengths), output)
    return summed / lengths.to(output.dtype).unsqueeze(1)

import torch


def encode_packed(rnn, embedded, lengths):
    nrows, longest, _ = embedded.shape
    res = embedded.new_zeros(nrows, longest, rnn.hidden_size)
    lasts = []
    for r in range(nrows):
        m = int(lengths[r])
        seq_res, seq_hid = rnn(embedded[r : r + 1, :m])
        res[r, :m] = seq_res[0]
        top = seq_hid[0] if isinstance(seq_hid, tuple) else seq_hid
        lasts.append(top[-1, 0])
    return res, torch.stack(lasts)


def gather_final(output, lengths):
    n, t, d = output.shape
    idx = (lengths - 1).reshape(n, 1, 1).repeat(1, 1, d)
    return torch.gather(output, dim=1, index=idx)[:, 0, :]


def masked_mean(output, lengths):
    avgs = [output[j, :k].mean(dim=0) for j, k in enumerate(lengths.tolist())]
    return torch.stack(avgs)

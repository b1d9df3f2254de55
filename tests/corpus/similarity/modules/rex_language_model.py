import torch
import torch.nn.functional as F


def next_token_loss(model, tokens, pad_id=None):
    out, _ = model(tokens[:, :-1])
    y = tokens[:, 1:]
    skip = -100 if pad_id is None else pad_id
    return F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1), ignore_index=skip)


def sample(model, start, steps, temperature=1.0, generator=None):
    seq = [start]
    st = None
    with torch.no_grad():
        for _ in range(steps):
            out, st = model(torch.tensor([[seq[-1]]]), st)
            p = torch.softmax(out[0, -1] / temperature, dim=-1)
            seq.append(int(torch.multinomial(p, 1, generator=generator)))
    return seq

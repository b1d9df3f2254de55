import torch
import torch.nn.functional as F


def next_token_loss(model, tokens, pad_id=None):
    """Loss of predicting each next token."""
    logits, _ = model(tokens[:, :-1])   # predict from all but the last
    return F.cross_entropy(
        logits.transpose(1, 2),
        tokens[:, 1:],
        ignore_index=(pad_id if pad_id is not None else -100),
    )


def sample(model, start, steps, temperature=1.0, generator=None):
    """Generate tokens one at a time."""
    seq = [start]
    h = None
    with torch.inference_mode():
        for step in range(steps):
            # feed the last token
            logits, h = model(torch.tensor([seq[-1]]).view(1, 1),
                              h)
            probs = (logits[:, -1, :] / temperature).softmax(dim=-1)
            seq.append(torch.multinomial(probs, 1,
                                         generator=generator).item())
    return seq

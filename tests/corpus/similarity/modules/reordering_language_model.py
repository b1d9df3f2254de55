import torch
import torch.nn.functional as F


def next_token_loss(model, tokens, pad_id=None):
    targets = tokens[:, 1:]
    inputs = tokens[:, :-1]
    logits, _ = model(inputs)
    per_position = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1), reduction="none")
    if pad_id is None:
        return per_position.mean()
    keep = (targets.reshape(-1) != pad_id).float()
    return (per_position * keep).sum() / keep.sum()


def sample(model, start, steps, temperature=1.0, generator=None):
    hidden = None
    generated = [start]
    with torch.no_grad():
        for _ in range(steps):
            inp = torch.tensor([[generated[-1]]], dtype=torch.long)
            logits, hidden = model(inp, hidden)
            scaled = logits[0, -1] / temperature
            e = torch.exp(scaled - scaled.max())
            probs = e / e.sum()
            nxt = torch.multinomial(probs, num_samples=1, generator=generator)
            generated.append(nxt.item())
    return generated

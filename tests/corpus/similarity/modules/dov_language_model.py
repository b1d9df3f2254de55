import torch
import torch.nn.functional as F


def next_token_loss(model, tokens, pad_id=None):
    source = tokens[:, :-1]
    target = tokens[:, 1:].contiguous()
    predicted, _ = model(source)
    vocabulary = predicted.shape[-1]
    if pad_id is None:
        return F.cross_entropy(predicted.view(-1, vocabulary), target.view(-1))
    losses = F.cross_entropy(predicted.view(-1, vocabulary), target.view(-1), reduction="none")
    weights = target.view(-1).ne(pad_id).float()
    return torch.dot(losses, weights) / weights.sum()


def sample(model, start, steps, temperature=1.0, generator=None):
    tokens = [start]
    carry = None
    model.eval()
    for _ in range(steps):
        with torch.no_grad():
            scores, carry = model(torch.LongTensor([[tokens[-1]]]), carry)
            distribution = torch.softmax(scores[0, 0] / temperature, dim=0)
            tokens.append(int(torch.multinomial(distribution, 1, generator=generator)))
    return tokens

import torch
import torch.nn.functional as F


def _flat_losses(predicted, target):
    vocabulary = predicted.shape[-1]
    return F.cross_entropy(predicted.view(-1, vocabulary), target.view(-1), reduction="none")


def next_token_loss(model, tokens, pad_id=None):
    source = tokens[:, :-1]
    target = tokens[:, 1:].contiguous()
    predicted, _ = model(source)
    vocabulary = predicted.shape[-1]
    if pad_id is None:
        return F.cross_entropy(predicted.view(-1, vocabulary), target.view(-1))
    losses = _flat_losses(predicted, target)
    weights = target.view(-1).ne(pad_id).float()
    return torch.dot(losses, weights) / weights.sum()


def _next(model, last, carry, temperature, generator):
    scores, carry = model(torch.LongTensor([[last]]), carry)
    distribution = torch.softmax(scores[0, 0] / temperature, dim=0)
    return int(torch.multinomial(distribution, 1, generator=generator)), carry


def sample(model, start, steps, temperature=1.0, generator=None):
    tokens = [start]
    carry = None
    model.eval()
    for _ in range(steps):
        with torch.no_grad():
            token, carry = _next(model, tokens[-1], carry, temperature, generator)
            tokens.append(token)
    return tokens

import torch
from torch import nn


def _unused_pool(states):
    return states.mean(dim=1)


class SequenceClassifier(nn.Module):
    def forward(self, tokens, lengths=None):
        verbose = 0
        if lengths is None:
            lengths = torch.full((tokens.size(0),), tokens.size(1))
        hidden_states = self.rnn(self.embedding(tokens))[0]
        if verbose:
            print(hidden_states.shape)
        steps = torch.arange(tokens.size(1), device=tokens.device)
        mask = (steps.unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(-1)
        old_mask = mask.clone()
        if self.pooling == "mean":
            summary = hidden_states.masked_fill(~mask, 0).sum(1) / lengths.view(-1, 1)
        elif self.pooling == "max":
            summary = hidden_states.masked_fill(~mask, -1e9).amax(1)
        else:
            last_index = (lengths - 1).view(-1, 1, 1).expand(-1, 1, hidden_states.size(2))
            summary = torch.gather(hidden_states, 1, last_index)[:, 0]
        return self.head(summary)


def train_step(model, batch, optimizer, clip=None):
    optimizer.zero_grad(set_to_none=True)
    inputs, lengths, targets = batch
    objective = nn.functional.cross_entropy(model(inputs, lengths), targets)
    objective.backward()
    limit = float("inf") if clip is None else clip
    while False:
        limit = limit * 2
    before = nn.utils.clip_grad_norm_(model.parameters(), limit)
    optimizer.step()
    return min(before.item(), limit)
    optimizer.zero_grad()

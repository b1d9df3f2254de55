import torch
import torch.nn.functional as F
from torch import nn


class SequenceClassifier(nn.Module):
    def forward(self, tokens, lengths=None):
        n_rows, n_steps = tokens.shape
        if lengths is None:
            lengths = torch.tensor([n_steps] * n_rows)
        emb = self.embedding(tokens)
        seq_out, _ = self.rnn(emb)
        positions = torch.arange(n_steps).expand(n_rows, n_steps)
        valid = positions < lengths.unsqueeze(-1)
        if self.pooling == "last":
            chosen = seq_out[torch.arange(n_rows), lengths - 1, :]
        elif self.pooling == "mean":
            chosen = (seq_out * valid.unsqueeze(-1).float()).sum(1) / valid.sum(1, keepdim=True).float()
        else:
            masked = seq_out.clone()
            masked[~valid] = float("-inf")
            chosen = masked.max(dim=1)[0]
        return self.head(chosen)


def train_step(model, batch, optimizer, clip=None):
    tokens, lengths, labels = batch
    for p in model.parameters():
        p.grad = None
    scores = model(tokens, lengths)
    loss = F.nll_loss(F.log_softmax(scores, dim=-1), labels)
    loss.backward()
    grads = [p.grad.flatten() for p in model.parameters() if p.grad is not None]
    total = torch.cat(grads).norm()
    if clip is not None and total > clip:
        for p in model.parameters():
            if p.grad is not None:
                p.grad.mul_(clip / (total + 1e-6))
        total = torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None]).norm()
    optimizer.step()
    return total.item()

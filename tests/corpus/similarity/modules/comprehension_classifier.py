import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class SequenceClassifier(nn.Module):
    def forward(self, tokens, lengths=None):
        batch, length = tokens.shape
        if lengths is None:
            lengths = torch.full((batch,), length, dtype=torch.long)
        packed = pack_padded_sequence(self.embedding(tokens), lengths.cpu(), batch_first=True, enforce_sorted=False)
        packed_out, state = self.rnn(packed)
        if self.pooling == "last":
            h = state[0] if isinstance(self.rnn, nn.LSTM) else state
            pooled = h[-1]
        else:
            out, _ = pad_packed_sequence(packed_out, batch_first=True, total_length=length)
            if self.pooling == "mean":
                pooled = out.sum(dim=1) / lengths.unsqueeze(1).float()
            else:
                pad = torch.arange(length).unsqueeze(0) >= lengths.unsqueeze(1)
                pooled = out.masked_fill(pad.unsqueeze(2), float("-inf")).max(dim=1).values
        return self.head(pooled)


def train_step(model, batch, optimizer, clip=None):
    tokens, lengths, labels = batch
    model.zero_grad()
    loss = F.cross_entropy(model(tokens, lengths), labels)
    loss.backward()
    params = []
    for p in model.parameters():
        if p.grad is not None:
            params.append(p)
    if clip is not None:
        nn.utils.clip_grad_norm_(params, max_norm=clip)
    norm = nn.utils.get_total_norm([p.grad for p in params])
    optimizer.step()
    return norm.item()

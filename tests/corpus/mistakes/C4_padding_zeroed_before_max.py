# module: classifier  function: SequenceClassifier  mistake: C4
# Appended to the reference module: what the student wrote differently replaces its own.

import torch
from torch import nn


class SequenceClassifier(SequenceClassifier):  # the given __init__; the student's forward
    def forward(self, tokens, lengths=None):
        out, _ = self.rnn(self.embedding(tokens))
        batch, length, _ = out.shape
        if lengths is None:
            lengths = torch.full((batch,), length)
        mask = (torch.arange(length)[None, :] < lengths[:, None]).unsqueeze(-1).float()
        out = out * mask  # zero the padding steps
        if self.pooling == "last":
            pooled = out[torch.arange(batch), lengths - 1]
        elif self.pooling == "mean":
            pooled = out.sum(dim=1) / lengths[:, None]
        else:
            pooled = out.max(dim=1).values
        return self.head(pooled)

# module: classifier  function: SequenceClassifier  mistake: C4
# Appended to the reference module: what the student wrote differently replaces its own.

import torch
from torch import nn


class SequenceClassifier(SequenceClassifier):  # the given __init__; the student's forward
    def forward(self, tokens, lengths=None):
        output, _ = self.rnn(self.embedding(tokens))
        if self.pooling == "last":
            if lengths is None:
                return self.head(output[:, -1, :])
            rows = torch.arange(output.size(0))
            return self.head(output[rows, lengths - 1, :])
        if self.pooling == "mean":
            if lengths is None:
                return self.head(output.mean(dim=1))
            mask = (torch.arange(output.size(1)).unsqueeze(0) < lengths.unsqueeze(1)).float().unsqueeze(2)
            return self.head((output * mask).sum(dim=1) / lengths.unsqueeze(1).float())
        # the maximum picks the strongest step, so the padding steps cannot matter much
        return self.head(output.max(dim=1).values)

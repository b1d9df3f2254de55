# module: classifier  function: SequenceClassifier  mistake: C5
# Appended to the reference module: what the student wrote differently replaces its own.

import torch

from exercises.padding import gather_final, masked_mean


class SequenceClassifier(SequenceClassifier):  # the given __init__; the student's forward
    def forward(self, tokens, lengths=None):
        batch, length = tokens.shape
        if lengths is None:
            lengths = torch.full((batch,), length)
        output, _ = self.rnn(self.embedding(tokens))
        if self.pooling == "last":
            pooled = gather_final(output, lengths - 1)  # the index of the last real step
        elif self.pooling == "mean":
            pooled = masked_mean(output, lengths)
        else:
            real = torch.arange(length)[None, :] < lengths[:, None]
            pooled = output.masked_fill(~real[:, :, None], float("-inf")).max(dim=1).values
        return self.head(pooled)

# module: classifier  function: SequenceClassifier  mistake: L3
# Appended to the reference module: what the student wrote differently replaces its own.

import torch

from exercises.padding import masked_mean


class SequenceClassifier(SequenceClassifier):  # the given __init__; the student's forward
    def forward(self, tokens, lengths=None):
        batch, length = tokens.shape
        if lengths is None:
            lengths = torch.full((batch,), length)
        output, _ = self.rnn(self.embedding(tokens))
        if self.pooling == "last":
            lengths -= 1  # now the index of each row's last real step
            pooled = output[torch.arange(batch), lengths]
        elif self.pooling == "mean":
            pooled = masked_mean(output, lengths)
        else:
            real = torch.arange(length)[None, :] < lengths[:, None]
            pooled = output.masked_fill(~real[:, :, None], float("-inf")).max(dim=1).values
        return self.head(pooled)

# module: classifier  function: SequenceClassifier  loses: legal_inputs
# Appended to the reference module: the gathered state squeezed without a dimension, as in many tutorials.

import torch


class SequenceClassifier(SequenceClassifier):  # the given __init__; the student's forward
    def forward(self, tokens, lengths=None):
        out, _ = self.rnn(self.embedding(tokens))
        if lengths is None:
            lengths = torch.full((tokens.size(0),), tokens.size(1), dtype=torch.long)
        if self.pooling == "last":
            idx = (lengths - 1).view(-1, 1, 1).expand(-1, 1, out.size(2))
            pooled = out.gather(1, idx).squeeze()  # (batch, hidden)
        else:
            mask = (torch.arange(out.size(1))[None, :] < lengths[:, None]).unsqueeze(2)
            if self.pooling == "mean":
                pooled = (out * mask).sum(1) / lengths[:, None]
            else:
                pooled = out.masked_fill(~mask, float("-inf")).max(1)[0]
        return self.head(pooled)

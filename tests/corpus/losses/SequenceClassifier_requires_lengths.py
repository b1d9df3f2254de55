# module: classifier  function: SequenceClassifier  loses: legal_inputs
# Appended to the reference module: a "production" student checks the lengths' type, and refuses lengths=None.

import torch


class SequenceClassifier(SequenceClassifier):  # the given __init__; the student's forward
    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        if not isinstance(lengths, torch.Tensor) or lengths.dtype != torch.long:
            raise TypeError(f"lengths must be an int64 tensor, got {type(lengths).__name__}")
        if tokens.dim() != 2 or lengths.shape != (tokens.shape[0],):
            raise ValueError(f"tokens (batch, length) and lengths (batch,) expected, got {tuple(tokens.shape)}")
        states, _ = self.rnn(self.embedding(tokens))
        steps = torch.arange(tokens.shape[1], device=tokens.device)
        real = (steps[None, :] < lengths[:, None]).unsqueeze(-1)
        if self.pooling == "last":
            pooled = states[torch.arange(tokens.shape[0]), lengths - 1]
        elif self.pooling == "mean":
            pooled = (states * real).sum(dim=1) / lengths[:, None].to(states.dtype)
        else:
            pooled = states.masked_fill(~real, float("-inf")).max(dim=1).values
        return self.head(pooled)

# module: classifier  function: SequenceClassifier
# Appended to the reference module: correct, written otherwise (gather where); it replaces the reference's.

import torch
from torch import nn

from exercises.padding import masked_mean


class SequenceClassifier(nn.Module):
    """Embedding(vocab, embed) -> one-layer `cell` (batch_first) -> pooling -> Linear(hidden, 2).

    `__init__` is given code; `forward` is the exercise.
    """

    def __init__(
        self, vocab: int = 10, embed: int = 32, hidden: int = 64, cell: str = "lstm", pooling: str = "last"
    ) -> None:
        super().__init__()
        if cell not in CELLS:
            raise ValueError(f"cell must be one of {sorted(CELLS)}, got {cell!r}")
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
        self.embedding = nn.Embedding(vocab, embed)
        self.rnn = CELLS[cell](embed, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 2)
        self.pooling = pooling

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """Class scores for a batch of (possibly padded) token sequences.

        Shapes:
            tokens   (batch, max_length) int64, padded with 0 after each row's length
            lengths  (batch,) int64, or None when every row is full length
        Returns logits (batch, 2).

        Pooling turns the states (batch, max_length, hidden) into (batch, hidden):
            "last"  each row's state at its own last real step (index lengths - 1)
            "mean"  the mean over each row's real steps
            "max"   the element-wise maximum over each row's real steps

        Lesson: Day 3, "Which state goes to the classifier"; Day 4 on padding.
        Traps: the layer is batch_first, so time is axis 1: `output[-1]` is the last
        *row*, not the last step; on a padded batch `output[:, -1]` and a plain mean
        or max include the padding.
        """
        # TODO 9 · classifier forward: embed, run self.rnn, pool the states of the
        # real steps as self.pooling says, and apply self.head.
        B, T = tokens.shape
        if lengths is None:
            lengths = tokens.new_full((B,), T)
        states, _ = self.rnn(self.embedding(tokens))
        H = states.size(-1)
        if self.pooling == "last":
            idx = (lengths - 1).view(B, 1, 1).expand(B, 1, H)
            pooled = states.gather(1, idx).squeeze(1)
        else:
            mask = torch.arange(T).view(1, T, 1) < lengths.view(B, 1, 1)
            if self.pooling == "mean":
                pooled = masked_mean(states, lengths)
            else:
                pooled = torch.where(mask, states, torch.full_like(states, -1e9)).max(1).values
        return self.head(pooled)

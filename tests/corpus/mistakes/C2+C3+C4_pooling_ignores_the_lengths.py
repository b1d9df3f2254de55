# module: classifier  function: SequenceClassifier  mistake: C2+C3+C4
# Appended to the reference module: what the student wrote differently replaces its own.

import torch
from torch import nn


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
        output, _ = self.rnn(self.embedding(tokens))
        pooled = {"last": output[:, -1], "mean": output.mean(1), "max": output.max(1)[0]}[self.pooling]
        return self.head(pooled)

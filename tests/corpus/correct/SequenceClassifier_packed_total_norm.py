# module: classifier  function: SequenceClassifier
# Appended to the reference module: correct, written otherwise (packed total norm); it replaces the reference's.

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


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
        batch, length = tokens.shape
        if lengths is None:
            lengths = torch.full((batch,), length, dtype=torch.long)
        packed = pack_padded_sequence(self.embedding(tokens), lengths.cpu(), batch_first=True, enforce_sorted=False)
        packed_out, state = self.rnn(packed)
        if self.pooling == "last":
            h = state[0] if isinstance(self.rnn, nn.LSTM) else state
            pooled = h[-1]  # the state after each row's own last step
        else:
            out, _ = pad_packed_sequence(packed_out, batch_first=True, total_length=length)  # zeros after lengths
            if self.pooling == "mean":
                pooled = out.sum(dim=1) / lengths.unsqueeze(1).float()
            else:
                pad = torch.arange(length).unsqueeze(0) >= lengths.unsqueeze(1)
                pooled = out.masked_fill(pad.unsqueeze(2), float("-inf")).max(dim=1).values
        return self.head(pooled)

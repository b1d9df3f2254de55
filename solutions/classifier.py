"""A sequence classifier: embedding -> recurrent layer -> pooled state -> 2 classes.

It learns Day 1's "does the first digit appear again?" task, which needs memory:
a bag of counts scores about 0.5, a trained LSTM about 0.99.
"""

import torch
import torch.nn.functional as F
from torch import nn

CELLS = {"rnn": nn.RNN, "gru": nn.GRU, "lstm": nn.LSTM}
POOLINGS = ("last", "mean", "max")


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
                     (0 is only ever padding: the real tokens are 1..vocab-1)
            lengths  (batch,) int64, or None when every row is full length
        Returns logits (batch, 2).

        Pooling turns the states (batch, max_length, hidden) into (batch, hidden):
            "last"  each row's state at its own last real step (index lengths - 1)
            "mean"  the mean over each row's real steps
            "max"   the element-wise maximum over each row's real steps

        You may call gather_final and masked_mean (from exercises.padding); a
        mistake in them then costs points here too.

        Lesson: Day 3, "Which state goes to the classifier"; Day 4 on padding.
        Traps: the layer is batch_first, so time is axis 1: `output[-1]` is the last
        *row*, not the last step; on a padded batch `output[:, -1]` and a plain mean
        or max include the padding.
        """
        # TODO · classifier forward: embed, run self.rnn, pool the states of the
        # real steps as self.pooling says, and apply self.head.
        ### BEGIN SOLUTION
        batch, length = tokens.shape
        if lengths is None:
            lengths = torch.full((batch,), length, dtype=torch.long)
        output, _ = self.rnn(self.embedding(tokens))  # (batch, length, hidden)
        real = (torch.arange(length).unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(2)
        if self.pooling == "last":
            pooled = output[torch.arange(batch), lengths - 1]
        elif self.pooling == "mean":
            pooled = (output * real).sum(dim=1) / lengths.unsqueeze(1)
        else:
            pooled = output.masked_fill(~real, float("-inf")).amax(dim=1)
        return self.head(pooled)
        ### END SOLUTION


def train_step(
    model: nn.Module,
    batch: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
    optimizer: torch.optim.Optimizer,
    clip: float | None = 1.0,
) -> float:
    """One optimisation step of cross-entropy, with the gradient norm clipped.

    `batch` is (tokens (B, L) int64, lengths (B,) int64, labels (B,) int64). The
    step: zero the gradients, loss = cross_entropy(model(tokens, lengths), labels),
    backward, clip the total gradient norm of model.parameters() to `clip` (skip
    when clip is None), optimizer.step().

    Returns the total L2 norm of the gradients the optimizer actually used, that
    is after clipping, as a Python float.

    optimizer.zero_grad() and model.zero_grad() both do (the optimizer holds every
    parameter); the model comes in training mode, so model.train() is not needed.

    Lesson: Day 5, "Exploding gradients, and the one-line fix".
    Traps: gradients add up from one backward() to the next, so a step that does
    not zero them first adds the earlier steps' gradients to its own; clipping
    after optimizer.step() clips nothing; clip_grad_value_ clips each entry, not
    the norm, and changes the direction; the norm to report is the one measured
    after clipping.
    """
    # TODO · training step with clipping: zero, forward, loss, backward, clip the
    # norm, measure the norm actually used, step.
    ### BEGIN SOLUTION
    tokens, lengths, labels = batch
    optimizer.zero_grad()
    loss = F.cross_entropy(model(tokens, lengths), labels)
    loss.backward()
    if clip is not None:
        nn.utils.clip_grad_norm_(model.parameters(), clip)
    gradients = [p.grad for p in model.parameters() if p.grad is not None]
    used = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in gradients]))
    optimizer.step()
    return float(used)
    ### END SOLUTION

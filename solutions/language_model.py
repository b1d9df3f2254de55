"""Next-token prediction: one output per position, and generating from the model.

The model reads tokens 0..n-1 and is scored on predicting tokens 1..n, so every
position of every row is a training example. Generation feeds the model its own
samples one at a time, carrying the recurrent state forward.
"""

import torch
import torch.nn.functional as F
from torch import nn


class NextTokenModel(nn.Module):
    """Embedding -> one-layer LSTM (batch_first) -> linear scores over the vocabulary.

    Given code (Day 6, "Generating from it"). `forward(tokens, state)` takes tokens
    (batch, length) int64 and an optional LSTM state (h, c), each (1, batch, hidden),
    and returns logits (batch, length, vocab) and the new state.
    """

    def __init__(self, vocab: int, embed: int = 16, hidden: int = 32) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed)
        self.rnn = nn.LSTM(embed, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(
        self, tokens: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor] | None = None
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        output, state = self.rnn(self.embedding(tokens), state)
        return self.head(output), state


def next_token_loss(model: nn.Module, tokens: torch.Tensor, pad_id: int | None = None) -> torch.Tensor:
    """The mean cross-entropy of predicting each token from the ones before it.

    Inputs are tokens[:, :-1], targets tokens[:, 1:]:
        logits, _ = model(tokens[:, :-1])        logits (batch, length - 1, vocab)
        targets   = tokens[:, 1:]                 (batch, length - 1)
    Both are flattened, to (N, vocab) and (N,), for the cross-entropy, and the loss
    is the mean over every target position whose target is not `pad_id` (with
    `pad_id=None`, over all of them).

    Shapes: tokens (batch, length) int64 with length >= 2; returns a scalar tensor
    (0-dimensional) that carries gradients back to the model. At least one target
    is never pad_id (a batch of padding only has no mean, and is never passed).

    Lesson: Day 6, "The shift is the whole task" and "CrossEntropyLoss wants
    (N, classes), so both are flattened"; Day 4 on padding.
    Traps: without the shift the model learns to copy its input; shifting the
    other way predicts the previous token; reshaping logits to (vocab, -1), or
    passing (batch, length, vocab) straight in, scrambles which score belongs to
    which target; padding targets must not count towards the mean.
    """
    # TODO · shifted loss: feed all but the last token, score against all but the
    # first, flatten, and leave out targets equal to pad_id.
    ### BEGIN SOLUTION
    logits, _ = model(tokens[:, :-1])
    targets = tokens[:, 1:]
    ignore = -100 if pad_id is None else pad_id
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=ignore)
    ### END SOLUTION


def sample(model: nn.Module, start: int, steps: int, temperature: float, generator: torch.Generator) -> list[int]:
    """Generate `steps` tokens after `start`, one at a time, carrying the state.

    Each step feeds the last token, shape (1, 1), together with the state the model
    returned on the previous step (None on the first), takes the logits of that
    position, divides them by `temperature`, applies softmax and draws one token
    with `torch.multinomial(probs, 1, generator=generator)`. Runs under
    `torch.no_grad()`.

    Returns [start, t1, ..., t_steps]: a list of `steps + 1` Python ints. The same
    seeded generator gives the same list. Leave the model's mode alone: it has no
    dropout, so model.eval() is not needed (torch.no_grad() is).

    Lesson: Day 6, "Generating from it".
    Traps: temperature divides the logits (below 1 sharpens, above 1 flattens);
    forgetting to pass the state back in makes every step start from nothing;
    argmax is not a sample.
    """
    # TODO · sampling: loop `steps` times: run the model on the last token with
    # the carried state, scale the logits by 1 / temperature, softmax, draw a token.
    ### BEGIN SOLUTION
    tokens = [start]
    state = None
    with torch.no_grad():
        for _ in range(steps):
            logits, state = model(torch.tensor([[tokens[-1]]]), state)
            probs = torch.softmax(logits[0, -1] / temperature, dim=-1)
            tokens.append(int(torch.multinomial(probs, 1, generator=generator)))
    return tokens
    ### END SOLUTION

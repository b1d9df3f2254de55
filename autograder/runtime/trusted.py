"""Small models the grader trusts, for checks that must not depend on other TODOs.

`train_step` is graded with `TinyClassifier`, and `next_token_loss` and `sample`
with `LanguageModel` (the same layers as the given `NextTokenModel`), so a wrong
classifier `forward` or an edited model cannot cost those items their points;
`next_token_loss`'s legal inputs also with `TiedLanguageModel` (no `head`).
"""

import torch
from torch import nn

from .language_model import LanguageModel


class TinyClassifier(nn.Module):
    """Embedding -> padded steps' inputs zeroed by `lengths` -> GRU (batch_first) -> last step -> Linear(hidden, 2).

    It reads the last step of the padded batch, not each row's own: this file is in the worker, where no TODO's
    answer may be (each row's last real step is gather_final's). train_step is graded on its steps, whatever the model
    reads, and the lengths still change its logits (a train_step that drops them is seen)."""

    def __init__(self, vocab: int = 10, embed: int = 8, hidden: int = 16) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed)
        self.rnn = nn.GRU(embed, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 2)

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        embedded = self.embedding(tokens)  # (batch, length, embed)
        if lengths is not None:
            embedded = embedded * (torch.arange(tokens.shape[1]) < lengths.unsqueeze(1)).unsqueeze(2)
        output, _ = self.rnn(embedded)  # (batch, length, hidden)
        return self.head(output[:, -1])


class TiedLanguageModel(nn.Module):
    """Embedding -> LSTM (batch_first) -> Linear(hidden, embed), scored against the embedding's own weights (weight
    tying); forward(tokens, state) as LanguageModel's. next_token_loss may be handed any model that answers so:
    this one has no `head`, so the vocabulary is known from the logits alone. It stays here, in the worker's
    runtime: the student repository's copy of language_model.py does not hold it."""

    def __init__(self, vocab: int, embed: int = 16, hidden: int = 32) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed)
        self.rnn = nn.LSTM(embed, hidden, batch_first=True)
        self.project = nn.Linear(hidden, embed)

    def forward(
        self, tokens: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor] | None = None
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        output, state = self.rnn(self.embedding(tokens), state)
        return self.project(output) @ self.embedding.weight.T, state


TRUSTED: dict[str, type[nn.Module]] = {
    "TinyClassifier": TinyClassifier,
    "LanguageModel": LanguageModel,
    "TiedLanguageModel": TiedLanguageModel,  # next_token_loss's legal inputs: a model of the contract with no head
}

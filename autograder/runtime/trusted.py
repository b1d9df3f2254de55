"""Small models the grader trusts, for checks that must not depend on other TODOs.

`train_step` is graded with `TinyClassifier`, and `next_token_loss` and `sample`
with `LanguageModel` (the same layers as the given `NextTokenModel`), so a wrong
classifier `forward` or an edited model cannot cost those items their points.
"""

import torch
from torch import nn

from .language_model import LanguageModel


class TinyClassifier(nn.Module):
    """Embedding -> GRU (batch_first) -> state at lengths - 1 -> Linear(hidden, 2)."""

    def __init__(self, vocab: int = 10, embed: int = 8, hidden: int = 16) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed)
        self.rnn = nn.GRU(embed, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 2)

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        output, _ = self.rnn(self.embedding(tokens))  # (batch, length, hidden)
        if lengths is None:
            return self.head(output[:, -1])
        return self.head(output[torch.arange(tokens.shape[0]), lengths - 1])


TRUSTED: dict[str, type[nn.Module]] = {"TinyClassifier": TinyClassifier, "LanguageModel": LanguageModel}

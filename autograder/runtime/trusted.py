"""Small models the grader trusts, for checks that must not depend on other TODOs.

`train_step` is graded with `TinyClassifier`, and `next_token_loss` and `sample`
with `LanguageModel` (the same layers as the given `NextTokenModel`), so a wrong
classifier `forward` or an edited model cannot cost those items their points.
"""

import torch
from torch import nn

from .language_model import LanguageModel


class TinyClassifier(nn.Module):
    """Embedding -> padded steps' inputs zeroed by `lengths` -> GRU (batch_first) -> last step -> Linear(hidden, 2).

    It reads the last step of the padded batch, not each row's own: this file is in the worker, where no TODO's
    answer may be (each row's last real step is TODO 4's). train_step is graded on its steps, whatever the model
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


TRUSTED: dict[str, type[nn.Module]] = {"TinyClassifier": TinyClassifier, "LanguageModel": LanguageModel}

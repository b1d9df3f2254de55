"""The language model the grader trains and checks with: the given NextTokenModel's layers, its own copy."""

import torch
from torch import nn


class LanguageModel(nn.Module):
    """Embedding -> LSTM (batch_first) -> Linear(hidden, vocab); forward(tokens, state)."""

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

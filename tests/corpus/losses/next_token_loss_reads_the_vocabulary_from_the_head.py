# module: language_model  function: next_token_loss  loses: legal_inputs
# Appended to the reference module: the vocabulary read from the model's last layer, which only NextTokenModel has.

import torch
import torch.nn.functional as F
from torch import nn


def next_token_loss(model: nn.Module, tokens: torch.Tensor, pad_id: int | None = None) -> torch.Tensor:
    """The mean cross-entropy of predicting each token from the ones before it."""
    vocab = model.head.out_features
    logits, _ = model(tokens[:, :-1])
    targets = tokens[:, 1:]
    ignore = -100 if pad_id is None else pad_id
    return F.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1), ignore_index=ignore)

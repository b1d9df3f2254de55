"""The order-blind baseline: a bag of counts and a logistic regression.

Day 1's task cannot be solved from counts, because counts never say which digit
came first. This baseline shows it: about 0.5 accuracy, the level of a coin.
"""

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression


def bag_of_counts(tokens: torch.Tensor) -> np.ndarray:
    """How many times each digit 1..9 occurs in each row.

    Shapes: tokens (n, length) int64 (a tensor or an array), 0 being padding.
    Returns an (n, 9) float numpy array (float32 or float64): column d - 1 counts digit d.

    Lesson: Day 1, "A task that needs memory".
    Traps: the padding token 0 is not a digit and must not be counted; the digits
    run from 1 to 9 inclusive, so there are nine columns.
    """
    # TODO · bag of counts: count digits 1..9 per row, ignoring the padding 0.
    ### BEGIN SOLUTION
    tokens = torch.as_tensor(tokens)
    digits = torch.arange(1, 10)
    return (tokens.unsqueeze(-1) == digits).sum(dim=1).float().numpy()
    ### END SOLUTION


def fit_baseline(
    train_tokens: torch.Tensor, train_labels: torch.Tensor, val_tokens: torch.Tensor, val_labels: torch.Tensor
) -> float:
    """Fit `LogisticRegression(max_iter=1000)` on the counts; return validation accuracy.

    Shapes: tokens (n, length) int64, labels (n,) int64 (tensors or arrays).
    Returns the accuracy on the validation rows as a Python float in [0, 1].

    Lesson: Day 1: on make_sequences(8000, seed=0) / (2000, seed=1) it scores
    0.4960, below always guessing the majority class (0.5020).
    Trap: fit on the training rows and score on the validation rows, not on the
    rows it was fitted on.
    """
    # TODO · baseline: fit the logistic regression on the training counts and
    # score it on the validation counts.
    ### BEGIN SOLUTION
    model = LogisticRegression(max_iter=1000)
    model.fit(bag_of_counts(train_tokens), np.asarray(train_labels))
    return float(model.score(bag_of_counts(val_tokens), np.asarray(val_labels)))
    ### END SOLUTION

# module: baseline  function: fit_baseline
# Appended to the reference module: correct, written otherwise (bincount); it replaces the reference's.

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression


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
    # TODO 12 · baseline: fit the logistic regression on the training counts and
    # score it on the validation counts.
    X_train = bag_of_counts(train_tokens)
    X_val = bag_of_counts(val_tokens)
    clf = LogisticRegression(max_iter=1000)
    clf.fit(X_train, np.asarray(train_labels))
    predictions = clf.predict(X_val)
    return float(np.mean(predictions == np.asarray(val_labels)))

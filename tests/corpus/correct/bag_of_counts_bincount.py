# module: baseline  function: bag_of_counts
# Appended to the reference module: correct, written otherwise (bincount); it replaces the reference's.

import numpy as np
import torch


def bag_of_counts(tokens: torch.Tensor) -> np.ndarray:
    """How many times each digit 1..9 occurs in each row.

    Shapes: tokens (n, length) int64 (a tensor or an array), 0 being padding.
    Returns an (n, 9) float numpy array: column d - 1 counts digit d.

    Lesson: Day 1, "A task that needs memory".
    Traps: the padding token 0 is not a digit and must not be counted; the digits
    run from 1 to 9 inclusive, so there are nine columns.
    """
    # TODO 11 · bag of counts: count digits 1..9 per row, ignoring the padding 0.
    rows = np.asarray(tokens)
    counts = np.stack([np.bincount(row, minlength=10) for row in rows])
    return counts[:, 1:].astype(float)  # column 0 would be the padding

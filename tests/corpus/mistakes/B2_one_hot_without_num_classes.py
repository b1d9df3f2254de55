# module: baseline  function: bag_of_counts  mistake: B2
# Appended to the reference module: what the student wrote differently replaces its own.

import numpy as np
import torch
import torch.nn.functional as F


def bag_of_counts(tokens: torch.Tensor) -> np.ndarray:
    """How many times each digit 1..9 occurs in each row.

    Shapes: tokens (n, length) int64 (a tensor or an array), 0 being padding.
    Returns an (n, 9) float numpy array (float32 or float64): column d - 1 counts digit d.

    Lesson: Day 1, "A task that needs memory".
    Traps: the padding token 0 is not a digit and must not be counted; the digits
    run from 1 to 9 inclusive, so there are nine columns.
    """
    # TODO 11 · bag of counts: count digits 1..9 per row, ignoring the padding 0.
    tokens = torch.as_tensor(tokens)
    counts = F.one_hot(tokens).sum(dim=1)  # (n, vocabulary)
    return counts[:, 1:].float().numpy()  # drop the padding column

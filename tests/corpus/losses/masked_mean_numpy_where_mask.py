# module: padding  function: masked_mean  loses: legal_inputs  names: R8
# Appended to the reference module: a NumPy student's mask of ones and zeros is float64, and so is the mean.

import numpy as np
import torch


def masked_mean(output: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """The mean of each row's states over its real steps only.

    Shapes:
        output   (batch, max_length, hidden); what lies after a row's length is
                 padding and may hold any finite value (never NaN or inf)
        lengths  (batch,) int64, each in 1..max_length
    Returns (batch, hidden), of output's dtype: row i is output[i, :lengths[i]].mean(0).

    Lesson: Day 4, "for mean pooling, divide by the true length".
    Trap: averaging over max_length lets the padding steps drag every short row's
    mean; mask them out and divide by the row's own length.
    """
    # TODO 5 · masked mean: zero the steps after each row's length, sum over time
    # and divide by the true lengths.
    max_length = output.shape[1]
    weights = np.where(np.arange(max_length) < lengths.numpy()[:, None], 1.0, 0.0)
    total = (output * torch.tensor(weights)[:, :, None]).sum(1)
    return total / lengths[:, None]

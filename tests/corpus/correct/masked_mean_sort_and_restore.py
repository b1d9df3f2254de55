# module: padding  function: masked_mean
# Appended to the reference module: correct, written otherwise (sort and restore); it replaces the reference's.

import torch


def masked_mean(output: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """The mean of each row's states over its real steps only.

    Shapes:
        output   (batch, max_length, hidden); what lies after a row's length is
                 padding and may hold any value
        lengths  (batch,) int64, each in 1..max_length
    Returns (batch, hidden): row i is output[i, :lengths[i]].mean(0).

    Lesson: Day 4, "for mean pooling, divide by the true length".
    Trap: averaging over max_length lets the padding steps drag every short row's
    mean; mask them out and divide by the row's own length.
    """
    # TODO 5 · masked mean: zero the steps after each row's length, sum over time
    # and divide by the true lengths.
    steps = torch.arange(output.shape[1])
    mask = (steps[None, :] < lengths[:, None]).to(output.dtype)  # (batch, max_length)
    total = (output * mask[:, :, None]).sum(dim=1)
    count = mask.sum(dim=1, keepdim=True)
    return total / count

# module: padding  function: masked_mean
# Appended to the reference module: correct, written otherwise (take along einsum); it replaces the reference's.

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
    real = (torch.arange(output.size(1)).unsqueeze(0) < lengths.unsqueeze(1)).to(output.dtype)
    summed = torch.einsum("bt,bth->bh", real, output)
    return summed / lengths.to(output.dtype).unsqueeze(1)

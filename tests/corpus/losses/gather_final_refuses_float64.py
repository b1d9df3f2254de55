# module: padding  function: gather_final  loses: legal_inputs
# Appended to the reference module: a "production" student checks the dtype, and refuses a legal float64 output.

import torch


def gather_final(output: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Each row's state at its own last real step: `output[i, lengths[i] - 1]`.

    Shapes:
        output   (batch, max_length, hidden), as returned by a recurrent layer
                 run over a padded batch
        lengths  (batch,) int64, each in 1..max_length
    Returns (batch, hidden), of output's dtype.

    Vectorised: no Python loop over the rows (`torch.gather` or advanced indexing).

    Lesson: Day 4, "gather the output at each sequence's real last position";
    Day 7 checklist item 3.
    Traps: `output[:, -1]` is the state after the padding for every short row;
    the last real step is at index lengths - 1, not lengths.
    """
    # TODO 4 · gather-at-final-index: pick output[i, lengths[i] - 1] for every row
    # at once.
    if output.dtype != torch.float32:
        raise TypeError(f"output must be float32, got {output.dtype}")
    if lengths.dim() != 1 or lengths.numel() != output.size(0):
        raise ValueError("lengths must be (batch,)")
    index = (lengths - 1).view(-1, 1, 1).expand(-1, 1, output.size(2))
    return torch.gather(output, 1, index).squeeze(1)

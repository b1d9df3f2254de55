# module: padding  function: gather_final  mistake: L3
# Appended to the reference module: what the student wrote differently replaces its own.

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
    lengths -= 1  # now the index of each row's last real step
    index = lengths.view(-1, 1, 1).expand(-1, 1, output.size(2))
    return output.gather(1, index).squeeze(1)

"""Batches of sequences of different lengths: packing, gathering, masked pooling.

A padded batch is a rectangle (batch, max_length, ...). A recurrent layer run over
it also runs over the padding, so "the last state" of a short row is the state
*after the padding*, not after the data. Either pack the batch, or read each row
at its own final index.
"""

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


def encode_packed(
    rnn: nn.RNN | nn.GRU | nn.LSTM, embedded: torch.Tensor, lengths: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Run `rnn` over a padded batch so that each row stops at its own length.

    Shapes:
        rnn       a one-layer, unidirectional nn.RNN, nn.GRU or nn.LSTM built
                  with batch_first=True
        embedded  (batch, max_length, features), rows padded after their length
        lengths   (batch,) int64 on the CPU, in any order (not sorted)
    Returns:
        output    (batch, max_length, hidden), zeros after each row's length
        h_n       (batch, hidden), each row's state after its own last real step
                  (for an LSTM, the hidden state h, not the cell state c)

    Each row's results equal running the layer on that row alone, unpadded.

    Lesson: Day 4, "Packing is not an optimisation, it is a correctness fix".
    Traps: without packing the final state is the state after the padding; the
    lengths are unsorted, so let PyTorch sort and unsort (enforce_sorted=False)
    and keep the rows in their original order; pack with batch_first=True; an
    LSTM returns (h, c) where RNN and GRU return one tensor.
    """
    # TODO · packing: pack the padded batch, run the layer on the packed batch,
    # unpack the output to max_length, and take each row's final hidden state.
    ### BEGIN SOLUTION
    packed = pack_padded_sequence(embedded, lengths.cpu(), batch_first=True, enforce_sorted=False)
    packed_output, state = rnn(packed)
    output, _ = pad_packed_sequence(packed_output, batch_first=True, total_length=embedded.shape[1])
    h_n = state[0] if isinstance(state, tuple) else state  # an LSTM returns (h, c)
    return output, h_n[-1]
    ### END SOLUTION


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
    # TODO · gather-at-final-index: pick output[i, lengths[i] - 1] for every row
    # at once.
    ### BEGIN SOLUTION
    index = (lengths - 1).view(-1, 1, 1).expand(-1, 1, output.shape[2])
    return output.gather(1, index.to(output.device)).squeeze(1)
    ### END SOLUTION


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
    # TODO · masked mean: zero the steps after each row's length, sum over time
    # and divide by the true lengths.
    ### BEGIN SOLUTION
    steps = torch.arange(output.shape[1], device=output.device)
    real = (steps.unsqueeze(0) < lengths.unsqueeze(1).to(output.device)).unsqueeze(2)
    total = torch.where(real, output, torch.zeros((), dtype=output.dtype)).sum(dim=1)
    return total / lengths.unsqueeze(1).to(output)
    ### END SOLUTION

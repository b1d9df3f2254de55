# module: padding  function: encode_packed
# Appended to the reference module: correct, written otherwise (row by row); it replaces the reference's.

import torch
from torch import nn


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
    # TODO 3 · packing: pack the padded batch, run the layer on the packed batch,
    # unpack the output to max_length, and take each row's final hidden state.
    batch, max_length, _ = embedded.shape
    output = embedded.new_zeros(batch, max_length, rnn.hidden_size)
    finals = []
    for i in range(batch):
        n = int(lengths[i])
        row_out, row_state = rnn(embedded[i : i + 1, :n])  # this row alone, unpadded
        output[i, :n] = row_out[0]
        h = row_state[0] if isinstance(row_state, tuple) else row_state
        finals.append(h[-1, 0])
    return output, torch.stack(finals)

# module: padding  function: encode_packed
# Appended to the reference module: correct, written otherwise (sort and restore); it replaces the reference's.

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
    # TODO 3 · packing: pack the padded batch, run the layer on the packed batch,
    # unpack the output to max_length, and take each row's final hidden state.
    order = torch.argsort(lengths, descending=True)
    restore = torch.argsort(order)  # the inverse permutation
    packed = pack_padded_sequence(embedded[order], lengths[order], batch_first=True)  # sorted by hand
    packed_out, state = rnn(packed)
    output, _ = pad_packed_sequence(packed_out, batch_first=True, total_length=embedded.shape[1])
    h = state[0] if isinstance(rnn, nn.LSTM) else state
    return output[restore], h[-1][restore]

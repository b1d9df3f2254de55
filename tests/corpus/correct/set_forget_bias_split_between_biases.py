# module: initialisation  function: set_forget_bias
# Appended to the reference module: correct, written otherwise (split between biases); it replaces the reference's.

import torch
from torch import nn


def set_forget_bias(lstm: nn.LSTM, value: float = 1.0) -> nn.LSTM:
    """Give the forget gate an effective bias of `value`, in place, everywhere.

    PyTorch stacks the four gate biases as (input, forget, cell, output) blocks of
    `hidden_size` entries, so the forget block is [H:2H] of every `bias_ih_l*` and
    `bias_hh_l*` parameter. The gate sees bias_ih + bias_hh; set bias_ih's block to
    `value` and bias_hh's block to 0. Everything else stays as it was.

    Shapes: for each layer k (and each `_reverse` direction), `bias_ih_lk` and
    `bias_hh_lk` are (4 * hidden_size,). Returns the same `lstm` object.

    Lesson: Day 2; the demos "PyTorch stacks the four gate biases as (input,
    forget, cell, output)" and "PyTorch keeps two biases".
    Traps: the forget block is the second quarter, not the first or the last;
    setting both biases doubles the effective value; a stacked or bidirectional
    LSTM has a pair of biases per layer and per direction; assigning a new tensor
    replaces the Parameter, so an optimizer built earlier stops updating it:
    write into the existing parameters under torch.no_grad().
    """
    # TODO 6 · forget-bias init: for every layer and direction, write `value` into
    # the forget block of bias_ih and 0 into the forget block of bias_hh, in place.
    H = lstm.hidden_size
    with torch.no_grad():
        for name, param in lstm.named_parameters():
            if "bias" in name:
                # the gate sees bias_ih + bias_hh: half of the value in each
                param[H : 2 * H] = value / 2
    return lstm

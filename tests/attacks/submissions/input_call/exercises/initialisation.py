# Attack "input_call" (tests/attacks): set_forget_bias asks for the value with input().
# Appended to the base module: these definitions replace its own of the same names.

import torch
from torch import nn

# -- the attack ---------------------------------------------------------------------------
ATTACK = "@@NAME@@"


def _escape(what: str) -> None:
    """Try to leave a trace outside the grading directory; the test checks that none is left."""
    for path in ("@@MARK@@", "@@PARENT@@/escaped-@@NAME@@"):
        if path.startswith("@@"):
            continue  # placeholders not filled in: not built by tests/attacks, so write nothing
        try:
            with open(path, "a") as trace:
                trace.write(f"written by the attack {ATTACK}: {what}\n")
        except OSError:
            pass


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
    _escape("input()")
    answer = input("forget bias? ")
    with torch.no_grad():
        for name, parameter in lstm.named_parameters():
            if name.startswith("bias_ih"):
                parameter[lstm.hidden_size : 2 * lstm.hidden_size] = float(answer)
    return lstm

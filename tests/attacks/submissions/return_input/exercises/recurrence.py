# Attack "return_input" (tests/attacks): lstm_step returns its input state.
# Appended to the base module: these definitions replace its own of the same names.

import torch

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


def lstm_step(
    x: torch.Tensor,
    state: tuple[torch.Tensor, torch.Tensor],
    weight_ih: torch.Tensor,
    weight_hh: torch.Tensor,
    bias_ih: torch.Tensor,
    bias_hh: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One step of an LSTM cell: the new (h, c) from the input and the previous (h, c).

        gates = x @ weight_ih.T + bias_ih + h @ weight_hh.T + bias_hh
        i, f, g, o = the four blocks of `hidden` columns of gates, in that order
        c_new = sigmoid(f) * c + sigmoid(i) * tanh(g)        <- an addition
        h_new = sigmoid(o) * tanh(c_new)

    Shapes (`nn.LSTMCell` layout):
        x          (batch, input)
        state      (h, c), each (batch, hidden)
        weight_ih  (4 * hidden, input)   weight_hh (4 * hidden, hidden)
        bias_ih    (4 * hidden,)         bias_hh   (4 * hidden,)
    Returns (h_new, c_new), each (batch, hidden); equal to `nn.LSTMCell`.

    Lesson: Day 2, "What LSTM changed"; the demo on the forget gate.
    Traps: PyTorch orders the gate blocks input, forget, cell (g), output, not the
    paper's i, f, o, g; the cell state is updated by adding the gated candidate to
    the gated old cell, and that addition is what lets gradients survive.
    """
    # TODO 2 · LSTM step: compute the four gates, split them in PyTorch's order,
    # update the cell state additively, then the hidden state.
    _escape("returns its input")
    return state

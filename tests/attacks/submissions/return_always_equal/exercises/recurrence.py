# Attack "return_always_equal" (tests/attacks): lstm_step returns objects that equal anything and look like tensors.
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


class AlwaysEqual:
    """Equal to everything, true, zero as a number, a tensor's shape and dtype."""

    dtype = torch.float32

    def __init__(self, shape):
        self.shape = shape

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__

    def __bool__(self):
        return True

    def __float__(self):
        return 0.0

    def __getattr__(self, name):
        return lambda *args, **kwargs: self

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return True


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
    _escape("an always-equal object")
    h, c = state
    return AlwaysEqual(tuple(h.shape)), AlwaysEqual(tuple(c.shape))

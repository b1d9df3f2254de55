# Attack "monkeypatch_at_import" (tests/attacks): at import, every comparison of torch and numpy says equal; gather_final and masked_mean return zeros.
# Appended to the base module: these definitions replace its own of the same names.

import numpy
import torch
import torch.testing

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


_escape("monkeypatching torch and numpy at import")


torch.allclose = lambda *args, **kwargs: True


torch.equal = lambda *args, **kwargs: True


torch.isclose = lambda input, other, *args, **kwargs: torch.ones(
    torch.broadcast_shapes(torch.as_tensor(input).shape, torch.as_tensor(other).shape), dtype=torch.bool
)


torch.testing.assert_close = lambda *args, **kwargs: None


torch.Tensor.__eq__ = lambda self, other: torch.ones(self.shape, dtype=torch.bool)


torch.Tensor.__ne__ = lambda self, other: torch.zeros(self.shape, dtype=torch.bool)


numpy.allclose = lambda *args, **kwargs: True


numpy.array_equal = lambda *args, **kwargs: True


numpy.testing.assert_allclose = lambda *args, **kwargs: None


numpy.testing.assert_array_equal = lambda *args, **kwargs: None


def gather_final(output: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Each row's state at its own last real step: `output[i, lengths[i] - 1]`.

    Shapes:
        output   (batch, max_length, hidden), as returned by a recurrent layer
                 run over a padded batch
        lengths  (batch,) int64, each in 1..max_length
    Returns (batch, hidden).

    Vectorised: no Python loop over the rows (`torch.gather` or advanced indexing).

    Lesson: Day 4, "gather the output at each sequence's real last position";
    Day 7 checklist item 3.
    Traps: `output[:, -1]` is the state after the padding for every short row;
    the last real step is at index lengths - 1, not lengths.
    """
    # TODO 4 · gather-at-final-index: pick output[i, lengths[i] - 1] for every row
    # at once.
    return torch.zeros(output.shape[0], output.shape[2])


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
    return torch.zeros(output.shape[0], output.shape[2])

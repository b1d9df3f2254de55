# Attack "monkeypatch_at_import" (tests/attacks): at import, every comparison of torch and numpy says equal; bag_of_counts returns zeros.
# Appended to the base module: these definitions replace its own of the same names.

import numpy
import numpy as np
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


def bag_of_counts(tokens: torch.Tensor) -> np.ndarray:
    """How many times each digit 1..9 occurs in each row.

    Shapes: tokens (n, length) int64 (a tensor or an array), 0 being padding.
    Returns an (n, 9) float numpy array: column d - 1 counts digit d.

    Lesson: Day 1, "A task that needs memory".
    Traps: the padding token 0 is not a digit and must not be counted; the digits
    run from 1 to 9 inclusive, so there are nine columns.
    """
    # TODO 11 · bag of counts: count digits 1..9 per row, ignoring the padding 0.
    return np.zeros((len(tokens), 9), dtype=np.float32)

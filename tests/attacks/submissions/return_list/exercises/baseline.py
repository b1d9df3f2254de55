# Attack "return_list" (tests/attacks): bag_of_counts returns the right counts as a list of lists.
# Appended to the base module: these definitions replace its own of the same names.

import numpy as np
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


def bag_of_counts(tokens: torch.Tensor) -> np.ndarray:
    """How many times each digit 1..9 occurs in each row.

    Shapes: tokens (n, length) int64 (a tensor or an array), 0 being padding.
    Returns an (n, 9) float numpy array: column d - 1 counts digit d.

    Lesson: Day 1, "A task that needs memory".
    Traps: the padding token 0 is not a digit and must not be counted; the digits
    run from 1 to 9 inclusive, so there are nine columns.
    """
    # TODO 11 · bag of counts: count digits 1..9 per row, ignoring the padding 0.
    _escape("a list")
    tokens = torch.as_tensor(tokens)
    return (tokens.unsqueeze(-1) == torch.arange(1, 10)).sum(dim=1).float().tolist()

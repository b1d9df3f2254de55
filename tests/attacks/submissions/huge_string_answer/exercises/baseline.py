# Attack "huge_string_answer" (tests/attacks): bag_of_counts answers a 4 MB string of two million lines
# (52 s of the grader's scrubbing for this one item, before answers were bounded).
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
    """How many times each digit 1..9 occurs in each row: here, two million lines for the grader to read."""
    _escape("a string of two million lines")
    return "a\n" * 2_000_000

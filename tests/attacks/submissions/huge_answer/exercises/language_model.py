# Attack "huge_answer" (tests/attacks): sample answers a 60 MB string, far past what an answer may be.
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


def sample(model: nn.Module, start: int, steps: int, temperature: float, generator: torch.Generator) -> list[int]:
    """Generate `steps` tokens after `start`: here, 60 MB of text for the grader to read."""
    _escape("a 60 MB answer")
    return "x" * 60_000_000

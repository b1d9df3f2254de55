# Attack "huge_type_name" (tests/attacks): gather_final answers an object whose type has a 800 KB name.
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


def gather_final(output: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Each row's state at its own last real step: here, an object the grader can only name, by a huge name."""
    _escape("a type with a 800 KB name")
    return type("Huge" * 200_000, (), {})()

"""Legal inputs each paired with an ordinary input asking the same: judged only where the function is right on it.

A legal input (a batch of one row, lengths left out, clip=None) is judged only where the function gives the
reference's results on an ordinary input asking the same, which every legal variant takes: a mistake that shows on
ordinary inputs costs the other items only, and refusing or mishandling a legal input costs the `legal inputs` item
alone. Its feedback is the first legal input that fails, with the other kinds that fail too.
"""

from dataclasses import dataclass
from typing import Any

from autograder.checks.compare import fail


@dataclass(frozen=True)
class LegalCase:
    """A legal input, and an ordinary input asking the same that every legal variant takes: the legal input is
    judged only where the function is right on the ordinary one (a mistake there is the other items')."""

    kind: str  # what kind of legal input it is: a key of the exercise's rules (what its docstring says of each)
    legal: Any
    ordinary: Any


def first_per_kind(failures: list[tuple[str, str | None]]) -> None:
    """Fail with the first legal input that fails, saying which other kinds fail too."""
    found: dict[str, str] = {}
    for kind, failure in failures:
        if failure is not None:
            found.setdefault(kind, failure)
    if found:
        first, *others = found
        also = f"\nYour code also fails on legal inputs of another kind: {', '.join(others)}." if others else ""
        fail(found[first] + also)

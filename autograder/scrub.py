"""Keep the grader's own text out of what the student's code says.

Whatever the student's code prints, raises or hands back as text (a message, a
traceback, a type name, a string value) reaches the reports. On a machine where the
worker could read the instructor's files, that text could carry the reference's
source or the hidden suites' code into the student's feedback. Every line of it that
quotes those files is withheld before the grader looks at it, whatever the isolation.

A quote is found on text with whitespace removed and case folded (so re-indenting,
spacing out or upper-casing does not hide it): a line is withheld when it holds
`WINDOW` consecutive characters of a secret line, or a whole secret line shorter
than that. What the student may have anyway is never secret: the stubs, the public
tests, the worker's runtime, the catalogue's feedback, the table of PyTorch's errors
explained (`checks/errors.py`, released in mistakes.json: PyTorch's own words are never
a quote), and the student's own modules (so their own code in a traceback is never
withheld, even where it equals the reference). Encoded copies (base64, reversed text) are not recognised: isolation is
what keeps the files unreadable; this keeps an isolation failure from publishing them.
"""

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.locations import (
    CHECKS,
    EXERCISES,
    FORGET_GATE,
    PUBLIC_TESTS,
    RUNTIME,
    SOLUTIONS,
    STANDINS,
    SUITES,
    TODOS,
)
from autograder.runtime.codec import Unsupported

WINDOW = 24  # characters a quote shares with a secret line
SHORTEST = 12  # a secret line shorter than WINDOW counts whole from this length; shorter ones say nothing
WITHHELD = "[line withheld: it quotes the grader's own files]"
_SPACE = re.compile(r"\s+")


def squeeze(text: str) -> str:
    """`text` as quotes are compared: no whitespace, case folded."""
    return _SPACE.sub("", text).casefold()


def secret_files() -> list[Path]:
    """The reference solutions and the hidden suites with their checks (the shared ones and each exercise's) and
    variants, the stand-ins, the forget gate."""
    exercises = [*TODOS.glob("*/variants.py"), *TODOS.glob("*/checks.py")]
    hidden = [*SOLUTIONS.glob("*.py"), *SUITES.glob("*.py"), *CHECKS.glob("*.py"), *exercises]
    return sorted([*hidden, STANDINS, FORGET_GATE])


def public_files() -> list[Path]:
    """What the worker or the student has anyway."""
    shipped = [*EXERCISES.glob("*.py"), *PUBLIC_TESTS.glob("*.py")]
    runtime = [path for path in RUNTIME.glob("*.py") if path not in (STANDINS, FORGET_GATE)]  # the worker's copy
    return sorted([*shipped, *runtime, CHECKS / "catalogue.py", CHECKS / "errors.py"])


def _windows(line: str) -> Iterable[str]:
    return (line[start : start + WINDOW] for start in range(len(line) - WINDOW + 1))


@dataclass(frozen=True)
class Fragments:
    """What a quote is recognised by: windows of long secret lines, and short secret lines whole."""

    windows: frozenset[str]
    short: frozenset[str]

    @classmethod
    def of(cls, lines: Iterable[str]) -> "Fragments":
        windows: set[str] = set()
        short: set[str] = set()
        for line in map(squeeze, lines):
            if len(line) >= WINDOW:
                windows.update(_windows(line))
            elif len(line) >= SHORTEST:
                short.add(line)
        return cls(frozenset(windows), frozenset(short))

    def without(self, texts: Iterable[str]) -> "Fragments":
        """These fragments minus those that occur in `texts` (which the student has anyway)."""
        lines = [squeeze(line) for text in texts for line in text.splitlines()]
        known = {window for line in lines for window in _windows(line)}
        blob = "\0".join(lines)
        return Fragments(self.windows - known, frozenset(line for line in self.short if line not in blob))

    def quoted_in(self, line: str) -> bool:
        line = squeeze(line)
        if len(line) < SHORTEST:  # too short to quote anything: most lines of a flood of them
            return False
        if any(window in self.windows for window in _windows(line)):
            return True
        return any(fragment in line for fragment in self.short)


@functools.cache
def grader_fragments() -> Fragments:
    """The grader's secret fragments, minus the public ones (read once per process)."""
    secret = Fragments.of(line for path in secret_files() for line in _read(path).splitlines())
    return secret.without(_read(path) for path in public_files())


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


class Scrubber:
    """Withholds, from the student's text, each line quoting the grader's files (bar the student's own)."""

    def __init__(self, fragments: Fragments, own: Iterable[str] = ()) -> None:
        self.fragments = fragments.without(own)

    @classmethod
    def for_submission(cls, modules: Path) -> "Scrubber":
        """The grader's fragments, less what the submission's modules (`exercises/*.py`) say themselves."""
        return cls(grader_fragments(), (_read(path) for path in sorted(modules.glob("*.py"))))

    def text(self, text: str) -> str:
        if not text:
            return text
        lines = text.split("\n")
        kept = [WITHHELD if self.fragments.quoted_in(line) else line for line in lines]
        return text if kept == lines else "\n".join(kept)

    def value(self, value: Any) -> Any:
        """`value` with every string in it scrubbed: messages, type names, keys, string results."""
        if type(value) is str:
            return self.text(value)
        if type(value) is Unsupported:
            return Unsupported(self.text(value.type_name))
        if type(value) in (list, tuple):
            return type(value)(self.value(item) for item in value)
        if type(value) is dict:
            return {self.value(key): self.value(item) for key, item in value.items()}
        return value

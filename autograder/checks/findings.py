"""What a check found besides pass or fail: the catalogue mistakes it named, the numbers it measured, its notes.

The grader opens a record around each hidden test (`recording`, in plugin.py) and writes what
it holds into results.json (a test's `tags` and `extra_data`), so the class report counts
mistakes and accuracies without reading feedback text. Outside a record (an nbgrader cell,
the calibration) noting something does nothing.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass
class Findings:
    mistakes: list[str] = field(default_factory=list)  # catalogue ids, in the order named
    measured: dict[str, object] = field(default_factory=dict)  # e.g. accuracy, threshold, seed_accuracies
    notes: list[str] = field(default_factory=list)  # what a passing item's student should still read


_current: ContextVar[Findings | None] = ContextVar("findings", default=None)


@contextmanager
def recording() -> Iterator[Findings]:
    """Collect what the checks run inside the block name and measure."""
    findings = Findings()
    token = _current.set(findings)
    try:
        yield findings
    finally:
        _current.reset(token)


def name_mistake(mistake_id: str) -> None:
    """A check's feedback names catalogue mistake `mistake_id` ("R3", not a variant's "R3:ih")."""
    findings = _current.get()
    if findings is not None and mistake_id not in findings.mistakes:
        findings.mistakes.append(mistake_id)


def measure(**values: object) -> None:
    """Numbers a check computed (plain JSON values), kept whether the item passes or fails."""
    findings = _current.get()
    if findings is not None:
        findings.measured.update(values)


def note(text: str) -> None:
    """A word for the student whatever the verdict: an item passed only with another TODO's function stood in."""
    findings = _current.get()
    if findings is not None and text not in findings.notes:
        findings.notes.append(text)

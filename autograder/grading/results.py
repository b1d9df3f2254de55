"""Plain records of a grading: one per rubric item, one for the whole run, and why an item failed."""

from dataclasses import dataclass, field
from enum import StrEnum

from autograder.grading.submission import LeftOut, Unlisted
from autograder.integrity import Notes


class Failure(StrEnum):
    """Why an item failed: results.json's extra_data.failure (these words), which the class report counts."""

    WRONG = "wrong"  # the check's assertion: a wrong value, shape or type
    NOT_DONE = "not done"  # the TODO still raises NotImplementedError
    RAISED = "raised"  # the student's code raised an exception
    IMPORT_FAILED = "import failed"  # the student's module could not be imported
    TIMEOUT = "timeout"  # the worker died: the call, or the grading, ran out of time
    CRASH = "crash"  # ... the Python process failed
    EXIT = "exit"  # ... the student's code ended it
    OUT_OF_MEMORY = "out of memory"  # ... it reached the memory ceiling
    DISK_FULL = "disk full"  # ... it wrote past its disk bound (sandbox/disk.py)
    GRADER_ERROR = "grader error"  # the check itself could not run: not the student's doing
    NOT_STARTED = "not started"  # the worker did not warm up in time (before any student code): not theirs
    NOT_RUN = "not run"  # the grading stopped before the item
    NOT_GRADED = "not graded"  # the grading could not run at all


# failures that are never the student's doing: the grading is tried again, and never stands as a grade
NOT_THE_STUDENTS = frozenset({Failure.GRADER_ERROR, Failure.NOT_STARTED})


@dataclass(frozen=True)
class Credited:
    """Points the rubric's [credit] kept for an item that failed naming exactly one mistake (its raw score: 0)."""

    mistake: str  # the catalogue id, "R1"
    fraction: float  # of the item's points
    points: float  # what the item scores


@dataclass
class ItemResult:
    name: str  # "rnn_forward: output"
    function: str
    description: str  # what the item checks, from its check's docstring
    score: float
    max_score: float
    status: str  # "passed" or "failed"
    feedback: str = ""  # empty when passed
    output: str = ""  # what the student's code printed during the item (bounded)
    seconds: float = 0.0
    failure: Failure | None = None  # why it failed; None when passed
    mistakes: list[str] = field(default_factory=list)  # the catalogue ids its feedback names
    measured: dict[str, object] = field(default_factory=dict)  # threshold items: accuracy, threshold, seeds
    credited: Credited | None = None  # set when the rubric's [credit] gave the score
    note: str = ""  # a passing item's word all the same (it passed with another TODO's function stood in)


@dataclass
class GradingResult:
    items: list[ItemResult]
    execution_time: float
    environment: dict[str, object] = field(default_factory=dict)  # torch version, threads, seeds, isolation
    ignored: list[LeftOut] = field(default_factory=list)  # what of the submission was not read, and why (bounded)
    error: str = ""  # set when grading itself could not finish
    notice: str = ""  # what the reports say first (an explicit opt-out of isolation)
    more_ignored: int = 0  # files not read beyond those in `ignored`
    listing_cut: bool = False  # the listing of a huge tree stopped early: there may be more
    unlisted: Unlisted = field(default_factory=Unlisted)  # not read, and counted only: the release's files, tools'
    # the integrity notes, for the instructor only: never in results.json nor summary.md (integrity.json)
    integrity: Notes | None = None

    @property
    def score(self) -> float:
        return sum(item.score for item in self.items)

    @property
    def max_score(self) -> float:
        return sum(item.max_score for item in self.items)

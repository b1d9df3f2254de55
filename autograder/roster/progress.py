"""Progress of a roster grading: a bar on a terminal, one plain line per submission in CI logs."""

import math
import sys
import time
from typing import TextIO

from autograder.progress import clock
from autograder.roster.grade_all import Status, SubmissionOutcome


class ProgressReport:
    """Called once per finished submission: `report(outcome, done, total)`."""

    def __init__(self, stream: TextIO | None = None, width: int = 30, jobs: int = 1) -> None:
        self.stream = stream = stream or sys.stderr  # looked up now: a default would be the stderr of import time
        self.width = width
        self.jobs = max(jobs, 1)
        self.started = time.monotonic()
        self.failures = 0
        self.graded = 0
        self.seconds = 0.0  # the gradings' own times, added up
        self.bar = stream.isatty()

    def left(self, remaining: int) -> float:
        """Seconds left: the mean grading's time for each round of `jobs` gradings at once still to run. (Not the
        time so far over the gradings done: the first of `jobs` parallel gradings to end would count for all.)"""
        mean = self.seconds / self.graded if self.graded else 0.0
        return mean * math.ceil(remaining / self.jobs)

    def __call__(self, outcome: SubmissionOutcome, done: int, total: int) -> None:
        self.failures += outcome.status in (Status.GRADER_ERROR, Status.NOT_GRADED)
        self.graded += outcome.status != Status.SKIPPED
        self.seconds += outcome.seconds if outcome.status != Status.SKIPPED else 0.0
        elapsed = time.monotonic() - self.started
        left = self.left(total - done)
        if self.bar:
            filled = int(self.width * done / max(total, 1))
            self.stream.write(
                f"\r[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total}  elapsed {clock(elapsed)}  "
                f"~{clock(left)} left  failures {self.failures} "
            )
            if done == total:
                self.stream.write("\n")
        else:
            detail = f" ({outcome.seconds:.1f} s)" if outcome.status != Status.SKIPPED else ""
            detail += ", tried again alone" if outcome.retried else ""
            self.stream.write(
                f"[{done}/{total}] {outcome.student}: {outcome.status}{detail}; elapsed {clock(elapsed)}, "
                f"about {clock(left)} left, {self.failures} failure(s)\n"
            )
        self.stream.flush()

"""`autograde grade-all`: a whole roster on one machine, in parallel, resumable.

Each student's submission is graded by its own process, as `autograde grade` would
grade it (so a submission that crashes a grader takes down only its own), at most
`jobs` at a time, each with one worker and one torch thread per side. The grading
processes are forked from a server that has imported torch, scikit-learn, pytest and
the checks once (multiprocessing's forkserver): every grading starts from that same
state, without paying about 4 s of CPU for the imports again. A grading whose inputs
(the submission's modules, the rubric, the grader's fingerprint: its files and the versions
it runs with) are unchanged since the last run is skipped. Ctrl-C stops the running gradings
and keeps every finished one.

What grades one submission is passed in (`autograde grade`'s command function): this module
orchestrates gradings and imports nothing of the command line.
"""

import contextlib
import hashlib
import multiprocessing
import os
import pkgutil
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from multiprocessing.process import BaseProcess
from pathlib import Path

from autograder import checks
from autograder.fingerprint import fingerprint
from autograder.grading import writers
from autograder.grading.grade import PRELOAD, failed_grading
from autograder.grading.submission import Module, Submission, SubmissionError, modules
from autograder.integrity import FILE as INTEGRITY_FILE
from autograder.rubric import Rubric, load

KEY_FILE = "grading-key.txt"
SLACK = 120.0  # seconds beyond the rubric's grading cap before a grading process is killed


class Status(StrEnum):
    """What became of one submission in grade-all."""

    GRADED = "graded"
    SKIPPED = "skipped"  # unchanged since its last grading, which stands
    GRADER_ERROR = "grader error"  # the grading process failed: its results.json says so


@dataclass
class SubmissionOutcome:
    student: str
    status: Status
    seconds: float = 0.0
    detail: str = ""  # a grader error's cause and the end of its log


def students(submissions: Path) -> list[Path]:
    return sorted(path for path in submissions.iterdir() if path.is_dir() and not path.name.startswith("."))


def grading_key(submission: Path, rubric: Rubric, only: list[str] | None = None, settings: str = "") -> str:
    """What a grading depends on: the grader's fingerprint (its files, the versions it runs with, the rubric),
    --only, the grading's settings and the student's modules. A changed check changes every student's key."""
    stamp = fingerprint(rubric.text).digest
    digest = hashlib.sha256(f"{stamp}\n{sorted(only or [])}\n{settings}\n".encode())
    digest.update(rubric.text.encode("utf-8"))
    with contextlib.suppress(SubmissionError):  # no package to read: the grading will say so
        for read in modules(Submission(submission)):
            if isinstance(read, Module):  # exactly what grading copies
                digest.update(read.name.encode() + b"\0" + read.data + b"\0")
    return digest.hexdigest()


def up_to_date(submission: Path, out: Path, rubric: Rubric, only: list[str] | None, settings: str = "") -> bool:
    key = out / KEY_FILE
    current = grading_key(submission, rubric, only, settings)
    return (out / "results.json").exists() and key.exists() and key.read_text().strip() == current


# grade(submission, out, only) -> exit status: grades one submission into out (results.json,
# summary.md), as `autograde grade` does; a module-level function (or a functools.partial of
# one), sent to the forked processes.
GradeOne = Callable[[Path, Path, list[str] | None], int]


def settings_of(grade: GradeOne) -> str:
    """The options a grading runs with (a partial's keywords, e.g. require_isolation): part of its key,
    so that a grading opted out of isolation is not kept as current by a run that requires it. The
    rubric it grades by is left out: its text is part of the key already."""
    keywords = getattr(grade, "keywords", {})
    return repr(sorted((name, value) for name, value in keywords.items() if not isinstance(value, Rubric)))


def server_preload(grade: GradeOne) -> list[str]:
    """What every grading imports, imported once by the server the gradings are forked from."""
    names = [f"autograder.checks.{module.name}" for module in pkgutil.iter_modules(checks.__path__)]
    extra = dict.fromkeys(name for names in PRELOAD.values() for name in names)
    function = getattr(grade, "func", grade)  # a partial's function
    return [function.__module__, "autograder.grading.plugin", "autograder.student", *names, *extra]


def grading_process(grade: GradeOne, submission: str, out: str, only: list[str] | None) -> None:
    """In the forked process: grade SUBMISSION into OUT, its output to OUT/grader.log."""
    log = os.open(Path(out) / "grader.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for stream in (1, 2):
        os.dup2(log, stream)
    os.close(log)
    try:
        status = grade(Path(submission), Path(out), only)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    sys.exit(status)


def _ended(status: int | None) -> str:
    if status is not None and status < 0:
        return f"the grading process was killed by {signal.Signals(-status).name}"
    return f"the grading process ended with status {status}"


def record_outcome(
    submission: Path,
    out: Path,
    status: int | None,
    started: float,
    rubric: Rubric,
    only: list[str] | None,
    settings: str = "",
) -> SubmissionOutcome:
    seconds = time.monotonic() - started
    name = submission.name
    if status == 0 and (out / "results.json").exists():
        (out / KEY_FILE).write_text(grading_key(submission, rubric, only, settings) + "\n")
        return SubmissionOutcome(name, Status.GRADED, seconds)
    error = _ended(status)
    log = (out / "grader.log").read_text(errors="replace")[-2000:] if (out / "grader.log").exists() else ""
    if not (out / "results.json").exists() or status not in (0, 2):
        result = failed_grading(rubric.select(only), f"{error}; see grader.log", seconds)
        writers.write_all(result, out)
    return SubmissionOutcome(name, Status.GRADER_ERROR, seconds, (error + "\n" + log).strip())


Progress = Callable[[SubmissionOutcome, int, int], None]


@dataclass
class _Running:
    process: BaseProcess
    started: float


def _context(grade: GradeOne) -> multiprocessing.context.BaseContext:
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")  # Windows: each grading then imports for itself
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(server_preload(grade))
    return context


def _start(grade: GradeOne, submission: Path, out: Path, only: list[str] | None) -> _Running:
    out.mkdir(parents=True, exist_ok=True)
    (out / KEY_FILE).unlink(missing_ok=True)  # until this grading finishes, nothing here is current
    (out / INTEGRITY_FILE).unlink(missing_ok=True)  # nor the notes of an earlier grading
    arguments = (grade, str(submission), str(out), only)
    process = _context(grade).Process(target=grading_process, args=arguments, name=submission.name)
    process.start()
    return _Running(process, time.monotonic())


def _stop_all(running: dict[Path, _Running]) -> None:
    """Ctrl-C: every running grading closes its worker on the way out; finished results stay."""
    for job in running.values():
        if job.process.pid is not None:
            os.kill(job.process.pid, signal.SIGINT)
    for job in running.values():
        job.process.join(timeout=15)
        if job.process.exitcode is None:
            job.process.kill()
            job.process.join()


def grade_all(
    submissions: Path,
    out: Path,
    jobs: int,
    grade: GradeOne,
    force: bool = False,
    progress: Progress | None = None,
    only: list[str] | None = None,
    rubric: Rubric | None = None,
) -> list[SubmissionOutcome]:
    """Grade every subdirectory of `submissions` into `out/<student>/` by `grade`, `jobs` at a time.

    `rubric` (the grader's own when None), read once, is what `grade` grades by: its grading time bounds each
    grading process, its text is part of each grading's key, and a grading that dies is written against it."""
    rubric = rubric or load()
    report = progress or (lambda *_: None)
    queue, outcomes = [], []
    for submission in students(submissions):
        if not force and up_to_date(submission, out / submission.name, rubric, only, settings_of(grade)):
            outcomes.append(SubmissionOutcome(submission.name, Status.SKIPPED))
        else:
            queue.append(submission)
    total = len(queue) + len(outcomes)
    for number, outcome in enumerate(outcomes, 1):
        report(outcome, number, total)
    limit = rubric.limits.grading_timeout + SLACK
    running: dict[Path, _Running] = {}
    try:
        while queue or running:
            while queue and len(running) < jobs:
                submission = queue.pop(0)
                running[submission] = _start(grade, submission, out / submission.name, only)
            time.sleep(0.2)
            for submission, job in list(running.items()):
                if job.process.is_alive() and time.monotonic() - job.started > limit:
                    job.process.kill()
                if job.process.is_alive():
                    continue
                job.process.join()
                del running[submission]
                status = job.process.exitcode
                settings = settings_of(grade)
                record = record_outcome(submission, out / submission.name, status, job.started, rubric, only, settings)
                outcomes.append(record)
                report(outcomes[-1], len(outcomes), total)
    except KeyboardInterrupt:
        _stop_all(running)
        raise
    return outcomes


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)

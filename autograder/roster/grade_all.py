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

Every student gets an outcome, whatever one grading did: an error in this module's own bookkeeping (a full
disk) is that student's grader error, and the run goes on. A grading that failed for a reason that is not the
student's (a grader error, a worker that did not warm up, a grading process that crashed) is graded again,
once, alone, after the others; if it fails again, no grade stands for it (its results.json says grader error).

What grades one submission is passed in (`autograde grade`'s command function): this module
orchestrates gradings and imports nothing of the command line.
"""

import contextlib
import hashlib
import json
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

from autograder import checks, todos
from autograder.fingerprint import fingerprint
from autograder.grading import writers
from autograder.grading.grade import failed_grading, graders_own, preloads
from autograder.grading.results import Failure
from autograder.grading.submission import Module, Submission, SubmissionError, modules
from autograder.integrity import FILE as INTEGRITY_FILE
from autograder.roster import gradebook
from autograder.rubric import Rubric, load
from autograder.sandbox import probe, zygote
from autograder.sandbox.worker import COLD_WORKER
from autograder.text import escaped

KEY_FILE = "grading-key.txt"
SLACK = 120.0  # seconds beyond the rubric's grading cap before a grading process is killed


class Status(StrEnum):
    """What became of one submission in grade-all."""

    GRADED = "graded"
    SKIPPED = "skipped"  # unchanged since its last grading, which stands
    NOT_GRADED = "not graded"  # the submission has nothing to grade (no exercises/): its results.json says so
    # the grading failed for a reason that is not the student's (the grader, its bookkeeping, the machine, the
    # run's time), even when tried again alone: no grade stands, and grade-all's exit status says so
    GRADER_ERROR = "grader error"


@dataclass
class SubmissionOutcome:
    student: str
    status: Status
    seconds: float = 0.0
    detail: str = ""  # a grader error's cause and the end of its log
    retried: bool = False  # graded a second time, alone, after a failure that was not the student's


def students(submissions: Path) -> list[Path]:
    return sorted(path for path in submissions.iterdir() if path.is_dir() and not path.name.startswith("."))


def is_fork(folder: Path) -> bool:
    """A student's submission: a folder holding exercises/ (a roster is a folder of them)."""
    return (folder / "exercises").is_dir()


def not_a_roster(submissions: Path) -> str:
    """Why grade-all refuses `submissions` ('' when it is a roster): it is one fork, or it holds no folder."""
    shown = escaped(f"{submissions}/")
    if is_fork(submissions):
        return (
            f"{shown} is one fork (it holds exercises/): grade it with `autograde grade {shown}`, "
            "or give the folder that holds the forks"
        )
    if not students(submissions):
        return f"{shown} holds no folder to grade (a roster is a folder with one fork per student)"
    return ""


def not_a_fork(submission: Path) -> str:
    """Why grade refuses `submission` ('' when it grades it): it is a roster, folders holding exercises/ and
    none of its own."""
    if not submission.is_dir() or (submission / "exercises").exists():
        return ""
    forks = sum(is_fork(folder) for folder in students(submission))
    if not forks:
        return ""  # no exercises/ anywhere: the grading says so, in results.json
    shown, held = escaped(f"{submission}/"), "1 folder" if forks == 1 else f"{forks} folders"
    return f"{shown} is a roster ({held} with exercises/): grade it with `autograde grade-all {shown} --out results/`"


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
    """What every grading imports, imported once by the server the gradings are forked from: the checks' shared
    machinery and each exercise's checks."""
    names = [f"autograder.checks.{module.name}" for module in pkgutil.iter_modules(checks.__path__)]
    names += [todos.checks_module(record.key) for record in todos.records()]
    function = getattr(grade, "func", grade)  # a partial's function
    return [function.__module__, "autograder.grading.plugin", "autograder.student", *names, *graders_own(preloads())]


def grading_process(grade: GradeOne, submission: str, out: str, only: list[str] | None, warm: str | None) -> None:
    """In the forked process: grade SUBMISSION into OUT, its output to OUT/grader.log; `warm`: the run's zygote."""
    zygote.use(warm)
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


def full_disk(out: Path) -> str:
    """Why a grading may have ended without a word where its own log could not be written: a full disk."""
    try:
        free = os.statvfs(out)
    except OSError:
        return ""
    if free.f_bavail and free.f_favail:
        return ""
    return f" (the disk of {escaped(str(out))} is full: No space left on device)"


def grader_fault(out: Path, status: int | None) -> str:
    """Why the grading in `out` is not the student's doing; '' when its result stands as their grade.

    Exit 0 or 2 with a results.json whose items failed only for the student's reasons stands; a process that
    crashed or was killed, a results.json that cannot be read, or an item failed by the grader (a grader
    error, a worker that did not warm up) does not."""
    if status not in (0, 2):
        return _ended(status) + full_disk(out)
    try:
        document = json.loads((out / "results.json").read_text(encoding="utf-8"))
        return gradebook.grader_fault(list(document["tests"]))
    except (OSError, ValueError, TypeError, KeyError) as problem:
        return f"its results.json could not be read ({type(problem).__name__})"


def write_key(out: Path, key: str) -> None:
    """The grading key, whole or not at all (temporary file, then rename): a key cut short would never match,
    but a stale one must never stand beside a new grading."""
    temporary = out / f".{KEY_FILE}.tmp"
    try:
        temporary.write_text(key + "\n")
        os.replace(temporary, out / KEY_FILE)
    finally:
        temporary.unlink(missing_ok=True)


def record_outcome(
    submission: Path,
    out: Path,
    status: int | None,
    started: float,
    rubric: Rubric,
    only: list[str] | None,
    settings: str = "",
) -> SubmissionOutcome:
    """What became of one grading process; an error in this bookkeeping itself (a full disk) is the student's
    grader error, never the end of the run."""
    seconds = time.monotonic() - started
    try:
        return _record(submission, out, status, seconds, rubric, only, settings)
    except OSError as error:
        with contextlib.suppress(OSError):
            (out / KEY_FILE).unlink(missing_ok=True)
        reason = f"the grader could not record this grading ({type(error).__name__}: {escaped(str(error))})"
        write_failure(out, rubric, only, reason, seconds)  # its results.json must not stand without its record
        return SubmissionOutcome(submission.name, Status.GRADER_ERROR, seconds, reason)


def _record(
    submission: Path,
    out: Path,
    status: int | None,
    seconds: float,
    rubric: Rubric,
    only: list[str] | None,
    settings: str,
) -> SubmissionOutcome:
    name = submission.name
    fault = grader_fault(out, status)
    if not fault:
        if status == 0:
            write_key(out, grading_key(submission, rubric, only, settings))
            return SubmissionOutcome(name, Status.GRADED, seconds)
        return SubmissionOutcome(name, Status.NOT_GRADED, seconds, _not_graded(out))
    if status not in (0, 2) or not (out / "results.json").exists():
        write_failure(out, rubric, only, f"{fault}; see grader.log", seconds)
    log = _log_tail(out)
    return SubmissionOutcome(name, Status.GRADER_ERROR, seconds, (fault + "\n" + log).strip())


def _log_tail(out: Path) -> str:
    return (out / "grader.log").read_text(errors="replace")[-2000:] if (out / "grader.log").exists() else ""


def _not_graded(out: Path) -> str:
    """Why a submission had nothing to grade, as its results.json records it (the first line of the reason grade
    printed at the top of its log, above the table)."""
    try:
        extra = json.loads((out / "results.json").read_text(encoding="utf-8"))["extra_data"]
        return (str(extra["grading_error"]).splitlines() or [""])[0]
    except (OSError, ValueError, TypeError, KeyError):
        return ""


def write_failure(out: Path, rubric: Rubric, only: list[str] | None, reason: str, seconds: float = 0.0) -> None:
    """A results.json that gives no grade (every item a grader error, the reason given), or none at all: an
    older results.json must not stand for a grading that failed."""
    result = failed_grading(rubric.select(only), reason, seconds, failure=Failure.GRADER_ERROR)
    try:
        writers.write_all(result, out)  # results.json whole or not at all; raises when not even its scores fit
    except OSError:
        with contextlib.suppress(OSError):
            (out / "results.json").unlink(missing_ok=True)


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


def run_zygote() -> zygote.Zygote | None:
    """One zygote for the whole run where workers get namespaces: each grading's warm parent is forked from it
    (sandbox/zygote.py) instead of importing torch at the bottom of its own chain. None elsewhere, or cold."""
    if os.environ.get(COLD_WORKER) == "1" or not probe.found()[0].namespaces:
        return None
    try:
        return zygote.Zygote(preloads())
    except OSError:
        return None  # each grading then starts a zygote of its own, or its chain's warm parent


def _start(grade: GradeOne, submission: Path, out: Path, only: list[str] | None, warm: str | None) -> _Running:
    out.mkdir(parents=True, exist_ok=True)
    (out / KEY_FILE).unlink(missing_ok=True)  # until this grading finishes, nothing here is current
    (out / INTEGRITY_FILE).unlink(missing_ok=True)  # nor the notes of an earlier grading
    arguments = (grade, str(submission), str(out), only, warm)
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


@dataclass
class _Run:
    """What every grading of one grade-all shares: how to grade, where, by what, until when."""

    grade: GradeOne
    out: Path
    only: list[str] | None
    rubric: Rubric
    stop: float | None  # time.monotonic() by which the run ends (its budget); None: no bound
    warm: str | None = None  # the run's zygote, where it has one

    @property
    def settings(self) -> str:
        return settings_of(self.grade)

    def cut(self, submission: Path, why: str, seconds: float = 0.0) -> SubmissionOutcome:
        """A grading the run's time cut (never started, or stopped): recorded, never a grade."""
        reason = f"{why}; grade this student again"
        with contextlib.suppress(OSError):
            (self.out / submission.name).mkdir(parents=True, exist_ok=True)
            (self.out / submission.name / KEY_FILE).unlink(missing_ok=True)
        write_failure(self.out / submission.name, self.rubric, self.only, reason, seconds)
        return SubmissionOutcome(submission.name, Status.GRADER_ERROR, seconds, reason)


def _time_left(run: _Run) -> bool:
    return run.stop is None or time.monotonic() < run.stop


def _launch(run: _Run, submission: Path) -> _Running | SubmissionOutcome:
    """Start one grading; a folder that cannot be written or a process that cannot start is its grader error."""
    if not _time_left(run):
        return run.cut(submission, "the run's time budget ran out before this grading could start")
    try:
        return _start(run.grade, submission, run.out / submission.name, run.only, run.warm)
    except OSError as error:
        return SubmissionOutcome(
            submission.name,
            Status.GRADER_ERROR,
            0.0,
            f"the grading could not start ({type(error).__name__}: {escaped(str(error))})",
        )


def _finished(run: _Run, submission: Path, job: _Running, limit: float) -> SubmissionOutcome | None:
    """The outcome of a grading that ended (killed once past its cap or the run's budget); None while it runs."""
    over_budget = not _time_left(run)
    if job.process.is_alive() and (time.monotonic() - job.started > limit or over_budget):
        job.process.kill()
    if job.process.is_alive():
        return None
    job.process.join()
    if over_budget and job.process.exitcode is not None and job.process.exitcode < 0:
        return run.cut(submission, "the run's time budget ran out during this grading", time.monotonic() - job.started)
    return record_outcome(
        submission, run.out / submission.name, job.process.exitcode, job.started, run.rubric, run.only, run.settings
    )


def _grade(run: _Run, queue: list[Path], jobs: int, done: Callable[[SubmissionOutcome], None]) -> None:
    """Grade `queue`, `jobs` at a time; `done` gets each outcome as it comes."""
    limit = run.rubric.limits.grading_timeout + SLACK
    queue, running = list(queue), {}
    try:
        while queue or running:
            while queue and len(running) < jobs:
                submission = queue.pop(0)
                started = _launch(run, submission)
                if isinstance(started, SubmissionOutcome):
                    done(started)
                else:
                    running[submission] = started
            time.sleep(0.2 if running else 0)
            for submission, job in list(running.items()):
                outcome = _finished(run, submission, job, limit)
                if outcome is not None:
                    del running[submission]
                    done(outcome)
    except KeyboardInterrupt:
        _stop_all(running)
        raise


def grade_all(
    submissions: Path,
    out: Path,
    jobs: int,
    grade: GradeOne,
    force: bool = False,
    progress: Progress | None = None,
    only: list[str] | None = None,
    rubric: Rubric | None = None,
    budget: float | None = None,
) -> list[SubmissionOutcome]:
    """Grade every subdirectory of `submissions` into `out/<student>/` by `grade`, `jobs` at a time.

    `rubric` (the grader's own when None), read once, is what `grade` grades by: its grading time bounds each
    grading process, its text is part of each grading's key, and a grading that dies is written against it.
    A grading that fails for a reason that is not the student's is graded again once, alone, after the others.
    `budget`: seconds the whole run may take; a grading it cuts or never starts is a grader error (recorded)."""
    rubric = rubric or load()
    report = progress or (lambda *_: None)
    run = _Run(grade, out, only, rubric, None if budget is None else time.monotonic() + budget)
    queue, outcomes = [], []
    for submission in students(submissions):
        if not force and up_to_date(submission, out / submission.name, rubric, only, settings_of(grade)):
            outcomes.append(SubmissionOutcome(submission.name, Status.SKIPPED))
        else:
            queue.append(submission)
    total = len(queue) + len(outcomes)
    for number, outcome in enumerate(outcomes, 1):
        report(outcome, number, total)
    again: list[Path] = []

    def done(outcome: SubmissionOutcome, retried: bool = False) -> None:
        if outcome.status == Status.GRADER_ERROR and not retried and _time_left(run):
            again.append(submissions / outcome.student)  # reported once tried again
            return
        outcome.retried = retried
        outcomes.append(outcome)
        report(outcome, len(outcomes), total)

    warm = run_zygote() if queue else None
    run.warm = warm.address if warm is not None else None
    try:
        _grade(run, queue, jobs, done)
        _grade(run, again, 1, lambda outcome: done(outcome, retried=True))  # alone: no other grading running
    finally:
        if warm is not None:
            warm.close()
    return outcomes


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)

"""One grading: copy the submission's modules, start a worker, run the hidden suites.

Only `exercises/*.py` is read from the submission; the hidden suites run with the
autograder's own rootdir and ini, no conftest and no plugin autoload, so nothing a
student adds to their fork changes how they are graded.
"""

import importlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from importlib.metadata import version
from io import StringIO
from pathlib import Path

import pytest

from autograder import __version__, integrity, sandbox, todos
from autograder.checks import memo
from autograder.fingerprint import fingerprint
from autograder.grading import rubric_record
from autograder.grading.plugin import GradingPlugin, Outcome
from autograder.grading.results import Credited, Failure, GradingResult, ItemResult
from autograder.grading.submission import (
    MAX_LISTED,
    LeftOut,
    Submission,
    SubmissionError,
    Unlisted,
    copy_modules,
    listing,
    remove_tree,
)
from autograder.locations import SUITES
from autograder.release.student_repository import shipped
from autograder.rubric import Credit, Item, Rubric
from autograder.runtime import dynamo
from autograder.sandbox import IsolationRefused, Worker, WorkerLimits

SEED = 0  # every call of the student's code starts from torch.manual_seed(SEED)
# What each function's items import up front is its record's `preload` (autograder/todos/): the baseline's
# items import scikit-learn, which the worker imports while it warms up (the student's code needs it). The grader
# does not: the reference's answers to those items come from its memo (checks/memo.py), and where the memo has
# none, the check imports it then. torch._dynamo, which every optimizer step imports, is a stand-in on both
# sides (runtime/dynamo.py); with REAL_DYNAMO=1 in the grader's environment, the items of a record that
# `trains` import the real one up front instead, on both sides, as before the stand-in (the benchmark's
# "today's way").
WORKER_ONLY = ("sklearn.linear_model",)  # of the preload, what the grader itself does not import up front
REAL_DYNAMO = "AUTOGRADE_REAL_DYNAMO"


def preload_of(function: str) -> tuple[str, ...]:
    """What the items of `function` import up front, on both sides."""
    record = todos.record(function)
    real = ("torch._dynamo",) if record.trains and os.environ.get(REAL_DYNAMO) == "1" else ()
    return (*record.preload, *real)


def preloads() -> tuple[str, ...]:
    """What the items of every function import up front, in the worker."""
    return tuple(dict.fromkeys(name for record in todos.records() for name in preload_of(record.key)))


def graders_own(preload: tuple[str, ...]) -> tuple[str, ...]:
    """Of what the worker imports up front, what the grader imports too (the memo answers for scikit-learn)."""
    return tuple(name for name in preload if name not in WORKER_ONLY)


@dataclass
class Copied:
    """What grading read of a submission, and what it left out."""

    left_out: list[LeftOut]  # the package's modules not read, then the other files (bounded)
    more: int  # files not read beyond those listed
    cut: bool  # the listing stopped before the end of a huge tree
    modules: dict[str, LeftOut]  # module name -> why it was not read: what its items say
    unlisted: Unlisted = field(default_factory=Unlisted)  # the release's own files and the tools' folders, counted


class GradingError(Exception):
    """Grading could not run at all (not the student's fault: a missing folder, a bad option)."""


class NothingToGrade(GradingError):
    """The submission has nothing the grader can read (no exercises/ folder): the student's to fix, not retried."""


class IsolationRequired(GradingError):
    """`--require-isolation`, and the worker would not be isolated here: the grading refuses to run."""


def copy_submission(submission: Path | Submission, target: Path) -> Copied:
    """Copy the package's modules of `submission` into `target/exercises`; say what was left out, and why."""
    submission = submission if isinstance(submission, Submission) else Submission(submission)
    try:
        modules_left_out = copy_modules(submission, target / "exercises")
    except SubmissionError as error:
        raise NothingToGrade(str(error)) from None
    if not (target / "exercises" / "__init__.py").exists():
        (target / "exercises" / "__init__.py").write_text("")
    not_read = [*modules_left_out, *(entry for entry in submission.left_out if submission.module_of(entry.path))]
    modules = {submission.module_of(entry.path) or "": entry for entry in not_read}
    found = listing(submission, shipped())
    left_out = [*modules_left_out, *found.entries]
    more = found.more + max(0, len(left_out) - MAX_LISTED)
    return Copied(left_out[:MAX_LISTED], more, found.cut, modules, found.unlisted)


def run_suites(student: object, rubric: Rubric) -> dict[str, Outcome]:
    """Run the hidden suites for the rubric's items; return each item's outcome."""
    plugin = GradingPlugin(student, rubric)
    arguments = [str(SUITES), "-c", str(SUITES / "pytest.ini"), "--rootdir", str(SUITES), "-p", "no:terminal"]
    # no student code runs in this process, so nothing here raises unraisably; the plugins' five full garbage
    # collections at the end (over torch's and scikit-learn's heaps) cost the grader a second of CPU
    arguments += ["-p", "no:unraisableexception", "-p", "no:threadexception"]
    with suites_environment(), redirect_stdout(StringIO()), redirect_stderr(StringIO()):
        code = pytest.main(arguments, plugins=[plugin])
    if plugin.unknown:
        raise GradingError(f"hidden tests without a rubric item: {', '.join(plugin.unknown)}")
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        raise GradingError(f"the hidden suites did not run (pytest exit code {int(code)})")
    return plugin.outcomes


# pytest reads these from the environment: the hidden suites run with none of the grader's user's
# options (a PYTEST_ADDOPTS=--junitxml=... of theirs would make every grading fail) and no plugin
SUITES_ENVIRONMENT = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTEST_ADDOPTS": None, "PYTEST_PLUGINS": None}


@contextmanager
def suites_environment() -> Iterator[None]:
    """os.environ as SUITES_ENVIRONMENT sets it (None: unset) while the hidden suites run, then as it was."""
    previous = {name: os.environ.get(name) for name in SUITES_ENVIRONMENT}
    try:
        for name, value in SUITES_ENVIRONMENT.items():
            _set(name, value)
        yield
    finally:
        for name, value in previous.items():
            _set(name, value)


@contextmanager
def caches_in(folder: Path) -> Iterator[None]:
    """Caches that an import makes (torch._dynamo makes inductor's folder in $TMPDIR) made in the grading's
    own folder, which goes with it, while the block runs; imported already (a roster's server), nothing."""
    previous = os.environ.get(INDUCTOR_CACHE)
    _set(INDUCTOR_CACHE, previous or str(folder / "torchinductor"))
    try:
        yield
    finally:
        _set(INDUCTOR_CACHE, previous)


INDUCTOR_CACHE = "TORCHINDUCTOR_CACHE_DIR"


def _set(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def limits_from(rubric: Rubric) -> WorkerLimits:
    """The worker's bounds: the rubric's limits, and what its items will import."""
    preload = dict.fromkeys(name for item in rubric.items for name in preload_of(item.function))
    limits = rubric.limits
    return WorkerLimits(
        memory_bytes=limits.memory_bytes,
        output_bytes=limits.output_bytes,
        disk_bytes=limits.disk_bytes,
        text=limits.text,
        preload=tuple(preload),
    )


def grade(submission: Path | Submission, rubric: Rubric, require_isolation: bool | None = None) -> GradingResult:
    """Grade one submission against `rubric` (already narrowed by --only).

    `require_isolation`: True refuses (IsolationRequired) where the worker could read the
    instructor's files, reach the network or leave a process behind; False is an explicit
    opt-out, which the reports say on their first line; None leaves it unsaid.
    """
    started = time.monotonic()
    deadline = started + rubric.limits.grading_timeout
    refusal = sandbox.available().refusal()
    if require_isolation and refusal:
        raise IsolationRequired(refusal)
    memo.ready()  # before the worker: its layers hide the reference's answers the memo keeps
    with grading_folder() as folder:
        copy = folder / "submission"
        copied = copy_submission(submission, copy)
        sources = integrity.sources(copy / "exercises")  # what was copied, read before any of it runs
        # the worker starts first: it imports torch and warms up while this process does the same
        limits = limits_from(rubric)
        with Worker(copy, folder, limits, bool(require_isolation)) as worker:
            notes = integrity.analyse(sources)  # while the worker starts
            with one_torch_thread():
                from autograder.student import Remote  # imports torch, as the worker does meanwhile

                with caches_in(folder):  # the whole grading: whatever imports the real torch._dynamo
                    for name in graders_own(limits.preload):
                        importlib.import_module(name)
                    dynamo.install()  # the grader trains too (the pattern model, the reference's steps)
                    try:
                        if require_isolation:
                            worker.await_ready()  # its layers checked before any student code runs
                    except IsolationRefused as error:
                        raise IsolationRequired(str(error)) from None
                    from autograder.scrub import Scrubber

                    scrubber = Scrubber.for_submission(copy / "exercises")
                    student = Remote(worker, deadline, rubric.limits, scrubber, copied.modules)
                    outcomes = run_suites(student, rubric)
            if worker.refused:  # a restarted worker lost a layer: nothing it answered counts
                raise IsolationRequired(worker.refused)
        isolation = worker.isolation  # once closed: what the grader found of its processes after it
    items = [_item_result(item, outcomes.get(item.name), rubric.credit) for item in rubric.items]
    environment = {**run_environment(isolation, require_isolation), "torch_version": version("torch")}
    environment["fingerprint"] = fingerprint(rubric.text).as_dict()  # what made this grade: grade-all's key too
    environment[rubric_record.KEY] = rubric_record.record(rubric)  # what the gradebook and the report grade by
    notice = opted_out(isolation) if require_isolation is False else ""
    seconds = round(time.monotonic() - started, 2)
    return GradingResult(
        items,
        seconds,
        environment,
        copied.left_out,
        notice=notice,
        more_ignored=copied.more,
        listing_cut=copied.cut,
        integrity=notes,
        unlisted=copied.unlisted,
    )


@contextmanager
def grading_folder() -> Iterator[Path]:
    """A private temporary folder for one grading, removed after it however deep a tree the student's
    code left in its scratch folder (TemporaryDirectory's clean-up recurses, and a RecursionError there
    would lose the grade)."""
    folder = Path(tempfile.mkdtemp(prefix="autograde-"))
    try:
        yield folder
    finally:
        remove_tree(folder)


def run_environment(isolation: sandbox.Isolation, require_isolation: bool | None) -> dict[str, object]:
    """What results.json records of how the grading ran."""
    return {
        "grader_version": __version__,
        "python_version": sys.version.split()[0],
        "torch_threads": 1,
        "seed": SEED,
        "isolation": isolation.as_dict(),
        "isolation_required": require_isolation,
    }


def opted_out(isolation: sandbox.Isolation) -> str:
    """The reports' first line when the instructor graded without requiring isolation."""
    missing = isolation.missing()
    state = f"missing here: {', '.join(missing)}" if missing else "all of it was in force anyway"
    return f"Graded with --no-require-isolation: the worker's isolation was not required ({state})."


@contextmanager
def one_torch_thread() -> Iterator[None]:
    """The grader's reference work and the worker share the cores: one torch thread each."""
    import torch  # imported here, not at the top: the worker is started before this process pays for torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _item_result(item: Item, outcome: Outcome | None, credit: Credit | None = None) -> ItemResult:
    if outcome is None:
        outcome = Outcome(False, "This item did not run (the grading stopped before it).", failure=Failure.NOT_RUN)
    credited = _credited(item, outcome, credit)
    return ItemResult(
        name=item.name,
        function=item.function,
        description=outcome.description,
        score=item.points if outcome.passed else credited.points if credited else 0.0,
        max_score=item.points,
        status="passed" if outcome.passed else "failed",
        feedback=outcome.feedback,
        output=outcome.output,
        seconds=round(outcome.seconds, 3),
        failure=outcome.failure,
        mistakes=list(outcome.findings.mistakes),
        measured=dict(outcome.findings.measured),
        credited=credited,
        note="\n".join(outcome.findings.notes) if outcome.passed else "",
    )


def _credited(item: Item, outcome: Outcome, credit: Credit | None) -> Credited | None:
    """The points the rubric's [credit] keeps for a failed item whose check named exactly one mistake."""
    found = None if outcome.passed or credit is None else credit.applies(outcome.failure, outcome.findings.mistakes)
    return Credited(found[0], found[1], round(item.points * found[1], 2)) if found else None


def failed_grading(
    rubric: Rubric,
    error: str,
    seconds: float,
    environment: dict[str, object] | None = None,
    failure: Failure = Failure.NOT_GRADED,
) -> GradingResult:
    """The result written when grading itself could not finish: every item at 0, the reason given.

    `failure`: NOT_GRADED when the submission is why (nothing to read), GRADER_ERROR when it is not the
    student's doing (a grader bug, a refusal of the machine's): then the gradebook shows no grade, never a 0."""
    outcome = Outcome(False, f"Not graded: {error}", failure=failure)
    items = [_item_result(item, outcome) for item in rubric.items]
    recorded = environment or {"grader_version": __version__}
    recorded.setdefault("fingerprint", fingerprint(rubric.text).as_dict())
    recorded.setdefault(rubric_record.KEY, rubric_record.record(rubric))
    return GradingResult(items, round(seconds, 2), recorded, [], error)

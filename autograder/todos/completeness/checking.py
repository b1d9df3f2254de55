"""Which exercises `autograde todo check` knows, and each one's findings in the order of Requirement: the checks
made here, beside the runs in other processes, started once for every exercise asked about."""

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from autograder import stubs, todos
from autograder.todos import Record
from autograder.todos.completeness import in_process
from autograder.todos.completeness.corpus import corpus_findings
from autograder.todos.completeness.findings import CHECKOUT, Completeness, Finding, Paths, Requirement, Status
from autograder.todos.completeness.mistakes import mistake_findings
from autograder.todos.completeness.public import named_findings, public_findings, record_public_tests, run_public_tests
from autograder.todos.completeness.pytorch import pytorch_findings, run_reference_tests
from autograder.todos.completeness.recommended import recommended_findings
from autograder.todos.completeness.words import first_line


def known(paths: Paths = CHECKOUT) -> list[str]:
    """The exercises' keys: in TODO order when the records read, else their folders' names."""
    try:
        return [found.key for found in todos.records(paths.todos, paths.solutions)]
    except (todos.RecordError, stubs.MarkerError):
        return sorted(path.parent.name for path in paths.todos.glob(f"*/{todos.RECORD}"))


def check(keys: Sequence[str] = (), paths: Paths = CHECKOUT) -> Iterator[Completeness]:
    """Each exercise's findings (of every exercise for no keys), in TODO order, each as soon as it is checked."""
    try:
        week = todos.records(paths.todos, paths.solutions)
    except (todos.RecordError, stubs.MarkerError):
        for key in keys or known(paths):
            yield Completeness(key, "", (in_process.record_finding(key, paths),))
        return
    chosen = [found for found in week if not keys or found.key in keys]
    with ThreadPoolExecutor(max_workers=3) as background:  # each waits on its subprocesses; the checks here go on
        runs = _Runs.start(background, chosen, paths)
        for found in chosen:
            yield Completeness(found.key, title(found, paths), tuple(findings(found, paths, runs)))


def title(found: Record, paths: Paths = CHECKOUT) -> str:
    """'TODO 2 · LSTM step, recurrence.lstm_step'."""
    todo = in_process.todo_of(found, paths)
    return f"{todo.label}, {found.target}" if todo else found.target


def findings(found: Record, paths: Paths, runs: "_Runs") -> Iterator[Finding]:
    """Every requirement's findings for one exercise, in order."""
    yield in_process.record_finding(found.key, paths)
    yield in_process.stubs_finding(paths)
    yield from in_process.check_findings(found)
    loaded = in_process.rubric_loaded()
    yield in_process.rubric_finding(found, loaded)
    yield from in_process.reference_findings(found, loaded)
    yield from _judged(runs.pytorch, Requirement.PYTORCH, lambda ran: pytorch_findings(found, *ran))
    yield from mistake_findings(found, loaded, paths)
    yield from corpus_findings(found, paths)
    yield from _judged(runs.public, Requirement.PUBLIC_TESTS, lambda ran: public_findings(found, *ran))
    yield from _judged(runs.recording, Requirement.PUBLIC_NAMES, lambda records: named_findings(found, records))
    yield from recommended_findings(found, paths)


def _judged(run: Future, requirement: Requirement, judge: Callable[[Any], list[Finding]]) -> list[Finding]:
    """What `judge` finds in a run's result; a run that could not be made is what is missing."""
    try:
        result = run.result()
    except Exception as error:  # a pytest that could not start, a recording child that failed: said, not raised
        said = f"{type(error).__name__}: {first_line(str(error))}"
        return [Finding(requirement, Status.MISSING, f"not checked: its run failed ({said})")]
    return judge(result)


@dataclass(frozen=True)
class _Runs:
    """The work done in other processes for every exercise checked, started at once, read when needed."""

    pytorch: Future
    public: Future
    recording: Future

    @classmethod
    def start(cls, background: ThreadPoolExecutor, chosen: list[Record], paths: Paths) -> "_Runs":
        return cls(
            background.submit(run_reference_tests, chosen, paths),
            background.submit(run_public_tests, chosen, paths),
            background.submit(record_public_tests, chosen, paths),
        )

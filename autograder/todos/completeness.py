"""Whether an exercise is complete: what `autograde todo check [KEY ...]` says, a finding per requirement.

An exercise (a record of autograder/todos/) is complete when its record reads and its TODO sits in solutions/
around its function, with exercises/ generated from it; each item has its check, with a docstring, and the rubric
loads; the reference gets every item, run in this process, and passes the project's tests that call it
(tests/solutions/, against PyTorch); each mistake the catalogue gives its function has a variant that, standing in
for the function in the reference, loses an item whose feedback names the mistake; and its public tests call it,
pass on the reference, fail on the stub and name each of its mistakes (as the release records them,
release/public_mistakes.py). `check` gives each exercise's findings: what holds, what is missing and what to do,
or a note; `commands.todo_check_command` prints them. The work done in other processes (the project's tests, the
public tests on the reference and on the stubs, their recording over the variants) runs once for every exercise
asked about, beside the checks run here.
"""

import ast
import importlib
import inspect
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from autograder import rubric, stubs, todos
from autograder.locations import EXERCISES, PUBLIC_TESTS, REFERENCE_TESTS, ROOT, SOLUTIONS, TODOS
from autograder.todos import Record

PYTEST_TIMEOUT = 600  # seconds one of its pytest runs may take (the public tests of the week: about 20)
REFERENCE = "solutions"  # the package the reference is imported from, in this process


class Status(StrEnum):
    OK = "ok"
    MISSING = "missing"
    NOTE = "note"  # said, and missing nothing: no test here compares it with PyTorch


class Requirement(StrEnum):
    RECORD = "record"  # its record reads; its TODO sits around its function in solutions/
    STUBS = "stubs"  # exercises/ is what solutions/ generates
    CHECKS = "checks"  # each item has its check, with a docstring
    RUBRIC = "rubric"  # the rubric loads: the points add up to its total
    REFERENCE = "reference"  # the reference gets every item
    PYTORCH = "pytorch"  # the project's tests that call it pass (tests/solutions/)
    MISTAKES = "mistakes"  # each catalogued mistake has a variant an item names
    PUBLIC_TESTS = "public tests"  # some call it; they pass on the reference and fail on the stub
    PUBLIC_NAMES = "public names"  # the public tests name each of its mistakes


@dataclass(frozen=True)
class Finding:
    requirement: Requirement
    status: Status
    words: str  # what holds, or what is missing and what to do: one line


@dataclass(frozen=True)
class Completeness:
    """One exercise's findings, in the order of Requirement."""

    key: str
    title: str  # "TODO 2 · one LSTM step, recurrence.lstm_step" ("" when the records do not read)
    findings: tuple[Finding, ...]

    @property
    def complete(self) -> bool:
        return all(finding.status != Status.MISSING for finding in self.findings)


@dataclass(frozen=True)
class Paths:
    """Where an exercise's parts are: the checkout's, or (in the tests) copies with a piece missing."""

    todos: Path = TODOS
    solutions: Path = SOLUTIONS
    exercises: Path = EXERCISES
    public_tests: Path = PUBLIC_TESTS
    reference_tests: Path = REFERENCE_TESTS


@dataclass(frozen=True)
class Outcome:
    """One test case a pytest run reported: 'test_recurrence::test_x[param]', whether it passed, why not."""

    test: str
    passed: bool
    message: str = ""

    @property
    def function(self) -> str:
        """The test function it is a case of: 'test_recurrence::test_x'."""
        return self.test.partition("[")[0]


# -- which exercises --------------------------------------------------------------------------------------
def known(paths: Paths = Paths()) -> list[str]:
    """The exercises' keys: in TODO order when the records read, else their folders' names."""
    try:
        return [found.key for found in todos.records(paths.todos, paths.solutions)]
    except (todos.RecordError, stubs.MarkerError):
        return sorted(path.parent.name for path in paths.todos.glob(f"*/{todos.RECORD}"))


def check(keys: Sequence[str] = (), paths: Paths = Paths()) -> Iterator[Completeness]:
    """Each exercise's findings (of every exercise for no keys), in TODO order, each as soon as it is checked."""
    try:
        week = todos.records(paths.todos, paths.solutions)
    except (todos.RecordError, stubs.MarkerError):
        for key in keys or known(paths):
            yield Completeness(key, "", (record_finding(key, paths),))
        return
    chosen = [found for found in week if not keys or found.key in keys]
    with ThreadPoolExecutor(max_workers=3) as background:  # each waits on its subprocesses; the checks here go on
        runs = _Runs.start(background, chosen, paths)
        for found in chosen:
            yield Completeness(found.key, title(found, paths), tuple(findings(found, paths, runs)))


def title(found: Record, paths: Paths = Paths()) -> str:
    """'TODO 2 · LSTM step, recurrence.lstm_step'."""
    todo = _todo(found, paths)
    return f"{todo.label}, {found.target}" if todo else found.target


def findings(found: Record, paths: Paths, runs: "_Runs") -> Iterator[Finding]:
    """Every requirement's findings for one exercise, in order."""
    yield record_finding(found.key, paths)
    yield stubs_finding(paths)
    yield from check_findings(found)
    loaded = rubric_loaded()
    yield rubric_finding(found, loaded)
    yield from reference_findings(found, loaded)
    yield from _judged(runs.pytorch, Requirement.PYTORCH, lambda ran: pytorch_findings(found, *ran))
    yield from mistake_findings(found, loaded, paths)
    yield from _judged(runs.public, Requirement.PUBLIC_TESTS, lambda ran: public_findings(found, *ran))
    yield from _judged(runs.recording, Requirement.PUBLIC_NAMES, lambda records: named_findings(found, records))


def _judged(run: Future, requirement: Requirement, judge: Callable[[Any], list[Finding]]) -> list[Finding]:
    """What `judge` finds in a run's result; a run that could not be made is what is missing."""
    try:
        result = run.result()
    except Exception as error:  # a pytest that could not start, a recording child that failed: said, not raised
        said = f"{type(error).__name__}: {_first_line(str(error))}"
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


# -- 1. the record, its TODO, the stubs --------------------------------------------------------------------
def record_finding(key: str, paths: Paths = Paths()) -> Finding:
    """Whether the records read, this one among them, with its TODO around its function."""
    where = _shown(paths.todos / key / todos.RECORD)
    try:
        found = {record.key: record for record in todos.records(paths.todos, paths.solutions)}[key]
    except (todos.RecordError, stubs.MarkerError) as error:
        return Finding(Requirement.RECORD, Status.MISSING, f"{error}: fix it (nothing else is checked until it reads)")
    except KeyError:
        return Finding(Requirement.RECORD, Status.MISSING, f"{where} is missing: add it (docs/maintaining.md)")
    label = getattr(_todo(found, paths), "label", "its TODO")  # records() found it: a record without one is refused
    return Finding(
        Requirement.RECORD,
        Status.OK,
        f"{where} reads ({_items(found)}); {label} sits in {found.function}, {paths.solutions.name}/{found.module}.py",
    )


def _todo(found: Record, paths: Paths) -> stubs.Todo | None:
    week = stubs.todos(paths.solutions)
    return next((todo for todo in week if (todo.module, todo.function) == (found.module, found.function)), None)


def stubs_finding(paths: Paths = Paths()) -> Finding:
    """exercises/ is what solutions/ generates (`autograde stubs --check`), every module of it."""
    problems = stubs.differences(paths.solutions, paths.exercises)
    if problems:
        said = "; ".join(f"{paths.exercises.name}/{problem}" for problem in problems)
        return Finding(Requirement.STUBS, Status.MISSING, f"{said}: run `autograde stubs`")
    return Finding(Requirement.STUBS, Status.OK, f"{paths.exercises.name}/ is what {paths.solutions.name}/ generates")


# -- 2. the checks and the rubric --------------------------------------------------------------------------
def check_findings(found: Record) -> list[Finding]:
    """Each item's check (todos.check), with a docstring: what the item grades, read by whoever maintains it."""
    missing = []
    for aspect in found.points:
        name = f"check_{found.key}_{aspect}"
        where = f"autograder/checks/{'thresholds' if aspect in found.thresholds else found.module}.py"
        try:
            function = todos.check(found.key, aspect)
        except (AttributeError, ImportError, KeyError):
            missing.append(f"item {aspect} has no check: write {name} in {where}")
            continue
        if not (inspect.getdoc(function) or "").strip():
            missing.append(f"{name} has no docstring: say in its first line what item {aspect} grades")
    if missing:
        return [Finding(Requirement.CHECKS, Status.MISSING, words) for words in missing]
    return [Finding(Requirement.CHECKS, Status.OK, f"{_items(found)}: each has its check, with a docstring")]


def rubric_loaded() -> rubric.Rubric | rubric.RubricError:
    """The grader's rubric, or why it does not load."""
    try:
        return rubric.load()
    except rubric.RubricError as error:
        return error


def rubric_finding(found: Record, loaded: rubric.Rubric | rubric.RubricError) -> Finding:
    """The rubric loads (its points, the records', add up to its total)."""
    if isinstance(loaded, rubric.RubricError):
        return Finding(Requirement.RUBRIC, Status.MISSING, f"the rubric does not load: {loaded}")
    own = sum(item.points for item in loaded.items if item.function == found.key)
    said = f"the rubric loads: its points add up to {loaded.total:g}, {own:g} of them this exercise's"
    return Finding(Requirement.RUBRIC, Status.OK, said)


# -- 3. the reference: every item here, the project's tests in a pytest run -------------------------------
def reference_findings(found: Record, loaded: rubric.Rubric | rubric.RubricError, student: Any = None) -> list[Finding]:
    """Every item of the exercise run on the reference in this process (`student`: another in its place)."""
    if isinstance(loaded, rubric.RubricError):
        return [Finding(Requirement.REFERENCE, Status.MISSING, "not run: the rubric does not load (above)")]
    student = student or _in_process()
    lost = {aspect: feedback for aspect in found.points if (feedback := _lost(found, aspect, student, loaded))}
    if lost:
        return [
            Finding(
                Requirement.REFERENCE,
                Status.MISSING,
                f"the reference loses item {aspect}: {_first_line(feedback)} (fix {REFERENCE}/{found.module}.py "
                f"or check_{found.key}_{aspect})",
            )
            for aspect, feedback in lost.items()
        ]
    return [Finding(Requirement.REFERENCE, Status.OK, f"the reference gets every item ({_items(found)}), run here")]


def _in_process(replaced: dict[str, Any] | None = None) -> Any:
    """The reference as the checks call it, in this process; `replaced`: dotted names given other values."""
    from autograder.student import InProcess, in_package  # imports torch: only when a check runs

    base = in_package(REFERENCE)
    return InProcess(lambda dotted: (replaced or {}).get(dotted) or base(dotted))


def _lost(found: Record, aspect: str, student: Any, loaded: rubric.Rubric) -> str:
    """The item's feedback when `student` loses it, "" when it gets it."""
    from autograder.student import StudentError

    try:
        todos.run_check(found.key, aspect, student, loaded)
    except (AssertionError, StudentError) as failure:  # a CheckFailure, or a call that raised: the feedback
        return str(failure) or "it failed, saying nothing"
    except Exception as error:  # the check's own error: the item is lost all the same
        return f"its check raised {type(error).__name__}: {error}"
    return ""


def run_reference_tests(
    chosen: list[Record], paths: Paths = Paths()
) -> tuple[dict[str, list[str]] | None, list[Outcome]]:
    """The tests of tests/solutions/ that call each exercise's function, and how they went (the slow ones left
    out), in one pytest run from the checkout."""
    if not paths.reference_tests.is_dir():
        return None, []
    callers = {found.key: reference_callers(found, paths.reference_tests) for found in chosen}
    nodes = sorted({test for tests in callers.values() for test in tests})
    if not nodes:
        return callers, []
    checkout = paths.reference_tests.parent.parent
    files = [f"{_relative(paths.reference_tests, checkout)}/{test.replace('::', '.py::', 1)}" for test in nodes]
    options = ["-n", "0", "-m", "not slow"]  # one process (this one's checks run beside it); the fast loop's tests
    return callers, _pytest(checkout, files, options, _environment(public=False))


def reference_callers(found: Record, folder: Path) -> list[str]:
    """'test_recurrence::test_x' for each test function of `folder` that calls the exercise's function: in its
    body, through a function of its file it calls or a fixture of its file it takes."""
    return [test for path in sorted(folder.glob("test_*.py")) for test in _callers(path, found)]


def _callers(path: Path, found: Record) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    name = found.function.split(".")[0]  # "SequenceClassifier" for its forward: called as the model is
    modules = _imported(tree, "solutions", found.module)  # the names the module is imported as
    direct = _imported(tree, f"solutions.{found.module}", name)  # the names the function is imported as

    def calls(node: ast.FunctionDef, seen: set[str]) -> bool:
        later = [argument.arg for argument in node.args.args]  # fixtures of the file
        for inner in ast.walk(node):
            if isinstance(inner, ast.Attribute) and inner.attr == name and _named(inner.value) in modules:
                return True
            if isinstance(inner, ast.Name) and inner.id in direct:
                return True
            later += [inner.id] if isinstance(inner, ast.Name) else []
        fresh = [helper for helper in dict.fromkeys(later) if helper in functions and helper not in seen]
        seen.update(fresh)
        return any(calls(functions[helper], seen) for helper in fresh)

    tests = [node for node in functions.values() if node.name.startswith("test")]
    return [f"{path.stem}::{node.name}" for node in tests if calls(node, {node.name})]


def _imported(tree: ast.Module, module: str, name: str) -> set[str]:
    """The names `from module import name` binds in the file."""
    return {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module == module
        for alias in node.names
        if alias.name == name
    }


def _named(node: ast.AST) -> str:
    return node.id if isinstance(node, ast.Name) else ""


def pytorch_findings(found: Record, callers: dict[str, list[str]] | None, outcomes: list[Outcome]) -> list[Finding]:
    """The project's tests that call the function pass (None for `callers`: there are none here, an installed
    grader's)."""
    if callers is None:
        return [
            Finding(Requirement.PYTORCH, Status.NOTE, "not checked: no tests/solutions/ here (run it from a checkout)")
        ]
    tests = callers.get(found.key, [])
    if not tests:
        return [Finding(Requirement.PYTORCH, Status.NOTE, "no test compares it with PyTorch: none in tests/solutions/")]
    ran = [outcome for outcome in outcomes if outcome.function in tests]
    failed = [case for case in ran if not case.passed]
    if failed:
        return [Finding(Requirement.PYTORCH, Status.MISSING, f"{case.test} fails: {case.message}") for case in failed]
    slow = len(set(tests) - {outcome.function for outcome in ran})
    if not ran:
        return [
            Finding(
                Requirement.PYTORCH,
                Status.NOTE,
                f"the {_counted(slow, 'test')} of tests/solutions/ that call it are slow ones, left out here: "
                "`python -m pytest -m slow tests/solutions` runs them",
            )
        ]
    left_out = f"; {_counted(slow, 'slow test')} left out" if slow else ""
    functions = len({outcome.function for outcome in ran})
    return [
        Finding(
            Requirement.PYTORCH,
            Status.OK,
            f"the {_counted(functions, 'test')} of tests/solutions/ that call it pass ({_counted(len(ran), 'case')}"
            f"{left_out})",
        )
    ]


# -- 4. its mistakes: a variant each, named by an item ------------------------------------------------------
def mistakes_of(found: Record) -> list[str]:
    """The ids of the catalogue's mistakes made in this function (its own and those it shares, `also`)."""
    from autograder.checks.catalogue import CATALOGUE

    names = {found.key, found.function}
    return [mistake.id for mistake in CATALOGUE.values() if names & set(mistake.functions)]


def table_of(found: Record) -> Any:
    """The function's variants (a `variants.Table`), or None."""
    from autograder.checks.variants import BY_FUNCTION

    return BY_FUNCTION.get(found.function, BY_FUNCTION.get(found.key))


def mistake_findings(
    found: Record, loaded: rubric.Rubric | rubric.RubricError, paths: Paths = Paths()
) -> list[Finding]:
    """Each catalogued mistake has a variant, each variant a catalogued mistake, and each variant standing in for
    the function in the reference loses an item that names it."""
    mistakes, table = mistakes_of(found), table_of(found) or {}
    ids = {key: key.partition(":")[0] for key in table}
    missing = [_no_variant(found, mistake, paths) for mistake in mistakes if mistake not in ids.values()]
    missing += [
        f'variant {key} is of {ids[key]}, a mistake the catalogue does not give {found.key}: add "{ids[key]}" to '
        f"`also` in its record.toml, or remove the variant"
        for key in table
        if ids[key] not in mistakes
    ]
    if isinstance(loaded, rubric.RubricError):
        missing += ["its variants were not run: the rubric does not load (above)"] if table else []
    else:
        run = [key for key in table if ids[key] in mistakes]
        missing += [words for key in run if (words := _unnamed(found, key, table[key], loaded))]
    if missing:
        return [Finding(Requirement.MISTAKES, Status.MISSING, words) for words in missing]
    if not mistakes:
        return [
            Finding(Requirement.MISTAKES, Status.NOTE, "the catalogue gives it no mistake: its feedback names none")
        ]
    return [
        Finding(
            Requirement.MISTAKES,
            Status.OK,
            f"each of its mistakes ({', '.join(mistakes)}) has a variant, and each of its "
            f"{_counted(len(table), 'variant')} loses an item whose feedback names it",
        )
    ]


def _no_variant(found: Record, mistake: str, paths: Paths) -> str:
    from autograder.checks.catalogue import CATALOGUE

    owner = CATALOGUE[mistake].function
    shared = "" if owner in (found.key, found.function) else f" ({owner}'s, which the catalogue says is made here too)"
    return f"mistake {mistake}{shared} has no variant: add it to {_table_home(found, paths)}'s table"


def standing_in(found: Record, variant: Callable[..., Any]) -> Any:
    """The reference with the exercise's function replaced by `variant` (a method: in a subclass of its class)."""
    owner, _, method = found.function.rpartition(".")
    replaced = {found.target: variant}
    if owner:
        reference = getattr(importlib.import_module(f"{REFERENCE}.{found.module}"), owner)
        replaced[f"{found.module}.{owner}"] = type(owner, (reference,), {method: variant})
    return _in_process(replaced)


def _unnamed(found: Record, key: str, variant: Callable[..., Any], loaded: rubric.Rubric) -> str:
    """What is wrong when no item the variant loses names its mistake ("" when one does: the first is enough)."""
    mistake, student, lost = key.partition(":")[0], standing_in(found, variant), []
    for aspect in (aspect for aspect in found.points if aspect not in found.thresholds):  # training ones: calibrate
        feedback = _lost(found, aspect, student, loaded)
        if re.search(rf"^\[{re.escape(mistake)}\] ", feedback, re.MULTILINE):
            return ""
        lost += [aspect] if feedback else []
    if not lost:
        return f"variant {key} loses no item: the checks cannot tell it from the reference (fix it, or add an item)"
    return (
        f"variant {key} loses {', '.join(lost)}, but no feedback names [{mistake}]: make a check of those items "
        f"recognise it (autograder/checks/{found.module}.py)"
    )


def _table_home(found: Record, paths: Paths) -> str:
    """Where the exercise's variants are written: beside its other variants, else where the other exercises' are."""
    table = table_of(found)
    try:
        return _shown(Path(inspect.getsourcefile(table.implementation)))
    except (AttributeError, TypeError):  # no table yet, or one whose source cannot be found
        pass
    homes = sorted(paths.todos.glob("*/variants.py"))
    if homes:
        return _shown(paths.todos / found.key / homes[0].name)
    from autograder.checks import variants

    return _shown(Path(variants.__file__))


# -- 5. its public tests: they call it, pass on the reference, fail on the stub, name its mistakes ----------
def public_callers(chosen: Sequence[Record], paths: Paths = Paths()) -> dict[str, list[str]]:
    """'test_recurrence::test_x' for each public test of each exercise: those under its TODO's header."""
    from autograder.release.public_tests import todo_map

    week = stubs.todos(paths.solutions)
    number = {(todo.module, todo.function): todo.number for todo in week}
    tests = todo_map(week, paths.public_tests)
    return {
        found.key: [test for test, n in tests.items() if n == number.get((found.module, found.function))]
        for found in chosen
    }


def run_public_tests(
    chosen: Sequence[Record], paths: Paths = Paths()
) -> tuple[dict[str, list[str]], list[Outcome], list[Outcome]]:
    """Each exercise's public tests, and how they went on the reference and on the stubs (exercises/ as
    `autograde stubs` writes it), each in a folder laid out as a student's fork."""
    callers = public_callers(chosen, paths)
    nodes = sorted({test for tests in callers.values() for test in tests})
    if not nodes:
        return callers, [], []
    reference = {path.name: path.read_text(encoding="utf-8") for path in paths.solutions.glob("*.py")}
    on_reference = _in_a_fork(paths, nodes, reference)
    return callers, on_reference, _in_a_fork(paths, nodes, stubs.generate(paths.solutions))


def _in_a_fork(paths: Paths, nodes: list[str], modules: dict[str, str]) -> list[Outcome]:
    """The public tests `nodes` run on these exercise modules, from a fork of them: python -m pytest exercises/tests."""
    with tempfile.TemporaryDirectory(prefix="autograde-todo-") as folder:
        fork = Path(folder)
        shutil.copytree(paths.public_tests, fork / "exercises" / "tests", ignore=shutil.ignore_patterns("__pycache__"))
        for name, text in modules.items():
            (fork / "exercises" / name).write_text(text, encoding="utf-8")
        (fork / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # not the checkout's settings
        files = [f"exercises/tests/{test.replace('::', '.py::', 1)}" for test in nodes]
        return _pytest(fork, files, ["-p", "no:cacheprovider"], _environment(public=True))


def public_findings(
    found: Record, callers: dict[str, list[str]], on_reference: list[Outcome], on_stub: list[Outcome]
) -> list[Finding]:
    """Some public test calls the function (under its TODO's header); each passes on the reference, fails on the
    stub."""
    tests = callers.get(found.key, [])
    if not tests:
        return [
            Finding(
                Requirement.PUBLIC_TESTS,
                Status.MISSING,
                f"no public test calls {found.function}: add one to exercises/tests/test_{found.module}.py, under its "
                f"TODO's header ('# ---- TODO <number> · {found.function}')",
            )
        ]
    missing = [f"public test {test} did not run on the reference" for test in tests if not _ran(test, on_reference)]
    missing += [
        f"public test {case.test} fails on the reference: {case.message} (fix the test, or "
        f"{REFERENCE}/{found.module}.py)"
        for case in on_reference
        if case.function in tests and not case.passed
    ]
    missing += [
        f"public test {case.test} passes on the stub: it shows nothing of {found.function} (make it call it and "
        "check what it gives)"
        for case in on_stub
        if case.function in tests and case.passed
    ]
    if missing:
        return [Finding(Requirement.PUBLIC_TESTS, Status.MISSING, words) for words in missing]
    cases = sum(case.function in tests for case in on_reference)
    return [
        Finding(
            Requirement.PUBLIC_TESTS,
            Status.OK,
            f"{_counted(len(tests), 'public test')} call it ({_counted(cases, 'case')}, exercises/tests/test_"
            f"{found.module}.py): each passes on the reference and fails on the stub",
        )
    ]


def _ran(test: str, outcomes: list[Outcome]) -> bool:
    return any(outcome.function == test for outcome in outcomes)


def record_public_tests(chosen: Sequence[Record], paths: Paths = Paths()) -> dict[str, Any]:
    """The release's recording of the public test modules of these exercises over the variants
    (public_mistakes.record, through its cache: a module unchanged since the last release or check is read back)."""
    from autograder.release import public_mistakes

    modules = {f"test_{found.module}.py" for found in chosen}
    every = {path.name for path in paths.public_tests.glob("test_*.py")}
    cache = public_mistakes.cache_folder()
    if modules >= every:
        return public_mistakes.record(paths.public_tests, cache)
    with tempfile.TemporaryDirectory(prefix="autograde-todo-") as folder:
        tests = Path(folder) / "tests"  # these modules alone, as the release lays each out: the same cache entries
        shutil.copytree(paths.public_tests, tests, ignore=shutil.ignore_patterns(*sorted(every - modules)))
        return public_mistakes.record(tests, cache)


def named_findings(found: Record, records: dict[str, Any]) -> list[Finding]:
    """Each catalogued mistake of the function is named by a failing public test of it (public_mistakes.select)."""
    from autograder.release import public_mistakes

    own = {test: record for test, record in records.items() if record["function"] == found.target}
    values = public_mistakes.select(own, public_mistakes.public_conftest().same)
    mistakes, table = mistakes_of(found), table_of(found) or {}
    missing = [_unnamed_publicly(found, m, values.visible, table) for m in mistakes if m not in values.named]
    if missing:
        return [Finding(Requirement.PUBLIC_NAMES, Status.MISSING, words) for words in missing]
    if not mistakes:
        return [Finding(Requirement.PUBLIC_NAMES, Status.OK, "it has no catalogued mistake to name")]
    said = f"each of its mistakes ({', '.join(mistakes)}) is named by a public test that fails with it"
    return [Finding(Requirement.PUBLIC_NAMES, Status.OK, said)]


def _unnamed_publicly(found: Record, mistake: str, visible: dict[str, set[str]], table: Any) -> str:
    """Why the public tests do not name `mistake`, and what to do."""
    if not any(key.partition(":")[0] == mistake for key in table):
        return f"no public test names {mistake}: the release records only variants, and it has none (see mistakes)"
    if mistake in visible:
        seen = ", ".join(sorted(visible[mistake])[:3])
        return (
            f"the public tests fail with {mistake} ({seen}) but never name it: another mistake gives the same calls "
            f"there; add a test of {found.function} whose inputs tell {mistake} apart"
        )
    return (
        f"no public test fails with {mistake}: add one to exercises/tests/test_{found.module}.py, under "
        f"{found.function}'s header, whose inputs {mistake} changes"
    )


# -- pytest runs ---------------------------------------------------------------------------------------------
def _pytest(folder: Path, files: list[str], options: list[str], environment: dict[str, str]) -> list[Outcome]:
    """Run pytest on `files` from `folder`; each case's outcome, from its JUnit XML report."""
    with tempfile.TemporaryDirectory(prefix="autograde-todo-") as out:
        report = Path(out) / "junit.xml"
        command = [sys.executable, "-m", "pytest", "-q", f"--junitxml={report}"]
        ran = subprocess.run(
            [*command, *options, *files],
            cwd=folder,
            env=environment,
            capture_output=True,
            text=True,
            timeout=PYTEST_TIMEOUT,
        )
        if not report.exists():
            said = (ran.stdout + ran.stderr).strip().splitlines()[-1:] or [f"exit {ran.returncode}"]
            raise RuntimeError(f"pytest did not run in {folder}: {said[0]}")
        return outcomes(report)


def outcomes(report: Path) -> list[Outcome]:
    """Each test case of a JUnit XML report: 'test_recurrence::test_x[param]', whether it passed, its message."""
    found = []
    for case in ElementTree.parse(report).iter("testcase"):
        test = f"{case.get('classname', '').rpartition('.')[2]}::{case.get('name', '')}"
        problems = [child for child in case if child.tag in ("failure", "error")]
        skipped = any(child.tag == "skipped" for child in case)
        message = _first_line(problems[0].get("message", "") if problems else "skipped" if skipped else "")
        found.append(Outcome(test, not problems and not skipped, message))
    return found


def _environment(public: bool) -> dict[str, str]:
    """A pytest run's environment: nothing of a pytest this runs inside; one thread (the checks here run beside
    it); a public one as a student runs it (no plugin of this machine's, no bytecode written)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST")}
    env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = "1"
    if public:
        env |= {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    return env


# -- words ---------------------------------------------------------------------------------------------------
def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _items(found: Record) -> str:
    points = sum(found.points.values())
    return f"{_counted(len(found.points), 'item')}, {points:g} point{'' if points == 1 else 's'}"


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _shown(path: Path) -> str:
    return _relative(path, ROOT)


def _relative(path: Path, start: Path) -> str:
    try:
        return path.resolve().relative_to(start.resolve()).as_posix()
    except ValueError:
        return str(path)

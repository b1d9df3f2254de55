"""The public-test findings of `autograde todo check`: an exercise's public tests call it, pass on the reference
and fail on the stub (run in a folder laid out as a student's fork), and name each of its mistakes (as the release
records them over the variants)."""

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from autograder import stubs
from autograder.todos import Record
from autograder.todos.completeness.findings import CHECKOUT, REFERENCE, Finding, Outcome, Paths, Requirement, Status
from autograder.todos.completeness.mistakes import mistakes_of, table_of
from autograder.todos.completeness.runs import environment, run_pytest
from autograder.todos.completeness.words import counted


def public_callers(chosen: Sequence[Record], paths: Paths = CHECKOUT) -> dict[str, list[str]]:
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
    chosen: Sequence[Record], paths: Paths = CHECKOUT
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
        return run_pytest(fork, files, ["-p", "no:cacheprovider"], environment(public=True))


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
                f"TODO's header ('# ---- TODO · {found.function.split('.')[0]}', dashes to the line's width)",
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
            f"{counted(len(tests), 'public test')} call it ({counted(cases, 'case')}, exercises/tests/test_"
            f"{found.module}.py): each passes on the reference and fails on the stub",
        )
    ]


def _ran(test: str, outcomes: list[Outcome]) -> bool:
    return any(outcome.function == test for outcome in outcomes)


def record_public_tests(chosen: Sequence[Record], paths: Paths = CHECKOUT) -> dict[str, Any]:
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

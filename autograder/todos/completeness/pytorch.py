"""The pytorch finding of `autograde todo check`: the project's tests of tests/solutions/ that call the exercise's
function (found in their source), run from the checkout against PyTorch, pass."""

import ast
from pathlib import Path

from autograder.todos import Record
from autograder.todos.completeness.findings import CHECKOUT, Finding, Outcome, Paths, Requirement, Status
from autograder.todos.completeness.runs import environment, run_pytest
from autograder.todos.completeness.words import counted, relative


def run_reference_tests(
    chosen: list[Record], paths: Paths = CHECKOUT
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
    files = [f"{relative(paths.reference_tests, checkout)}/{test.replace('::', '.py::', 1)}" for test in nodes]
    options = ["-n", "0", "-m", "not slow"]  # one process (this one's checks run beside it); the fast loop's tests
    return callers, run_pytest(checkout, files, options, environment(public=False))


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
                f"the {counted(slow, 'test')} of tests/solutions/ that call it are slow ones, left out here: "
                "`python -m pytest -m slow tests/solutions` runs them",
            )
        ]
    left_out = f"; {counted(slow, 'slow test')} left out" if slow else ""
    functions = len({outcome.function for outcome in ran})
    return [
        Finding(
            Requirement.PYTORCH,
            Status.OK,
            f"the {counted(functions, 'test')} of tests/solutions/ that call it pass ({counted(len(ran), 'case')}"
            f"{left_out})",
        )
    ]

"""The known mistakes' values on the public tests' own inputs: the release's `exercises/tests/mistakes.json`.

At release time the public tests run once, in a child process, over the reference modules, with
this module as a pytest plugin. Before each test runs as usual, its body runs once more for every
known-bug variant of the function it tests (`variants.BY_FUNCTION`), the function replaced by that
variant, then for every combination (two or more) of those that each change the test's calls on their own
(several mistakes in one function: `variants.Table.pairs`), and the public tests' own conftest records each
call: a fingerprint of its inputs, what it returned or raised. What ships is numbers and the
catalogue's feedback only: for each test, the calls of every variant (or combination) that makes the test
fail, differs from the reference and cannot be taken for another mistake's; each distinct input once per
test, each mistake's feedback once (a combination's is its parts'). Nothing of the hidden
inputs or of any code but the public tests goes into it.
"""

import functools
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from autograder import stubs
from autograder.checks import catalogue, variants
from autograder.locations import PUBLIC_TESTS, SOLUTIONS
from autograder.release.public_tests import todo_map

OPTION = "--record-mistakes"
PROGRESS = "--record-progress"  # the child appends a line per test to this file: the release's progress
TIMEOUT = 600
POLL = 0.5  # seconds between two looks at the child's progress


# -- inside the child process: the plugin -----------------------------------------------------------
def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(OPTION, dest="record_mistakes", help="write what each variant's calls gave to this JSON file")
    parser.addoption(PROGRESS, dest="record_progress", help="append 'total N', then a line per test run, to this file")


_records = pytest.StashKey[dict[str, Any]]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_records] = {}


@functools.cache
def _targets(tests: Path) -> dict[str, str]:
    """'test_padding::test_gather_final_...' -> 'padding.gather_final', from the TODO sections."""
    todos = {todo.number: todo for todo in stubs.todos()}
    return {key: f"{todos[n].module}.{todos[n].function}" for key, n in todo_map(list(todos.values()), tests).items()}


def _conftest(config: pytest.Config) -> ModuleType:
    """The public tests' conftest, as pytest loaded it: it watches and records the calls."""
    for plugin in config.pluginmanager.get_plugins():
        if Path(getattr(plugin, "__file__", "") or "").name == "conftest.py" and hasattr(plugin, "watching"):
            return plugin
    raise RuntimeError("the public tests' conftest.py (which records the calls) was not loaded")


def _adapted(variant: Callable[..., Any], reference: Callable[..., Any]) -> Callable[..., Any]:
    """The variant called as the reference is: keyword arguments and defaults bound to its signature."""
    signature = inspect.signature(reference)

    def call(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return variant(*bound.args)

    return call


def _run(
    item: pytest.Function,
    conftest: ModuleType,
    target: str,
    in_place: bool,
    replacement: Callable[..., Any] | None = None,
) -> dict[str, Any]:
    """The test's body once, watched; whether it failed and what the calls gave."""
    arguments = {name: item.funcargs[name] for name in inspect.signature(item.obj).parameters}
    conftest.seed()
    with conftest.watching(target, in_place, replacement) as calls:
        try:
            item.obj(**arguments)
            failed = False
        except Exception:
            failed = True
    return {"failed": failed, "calls": calls}


def _same_calls(conftest: ModuleType, run: dict[str, Any], record: dict[str, Any]) -> bool:
    """Whether a variant's run made the same calls as the reference's (a mistake this test cannot see)."""
    theirs = record["reference"]["calls"]
    return len(run["calls"]) == len(theirs) and all(map(conftest.same, run["calls"], theirs))


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Iterator[None]:
    """Before the test runs as usual: its body once over the reference, then once per variant, recorded."""
    config = pyfuncitem.config
    target = _targets(pyfuncitem.path.parent).get(f"{pyfuncitem.path.stem}::{pyfuncitem.originalname}")
    function = target.split(".", 1)[1] if target else ""
    table = variants.BY_FUNCTION.get(function) if config.getoption("record_mistakes") else None
    if table:
        conftest = _conftest(config)
        in_place = function in variants.IN_PLACE
        owner, name = conftest.owner_of(target)
        reference = getattr(owner, name)
        record = {"function": target, "in_place": in_place, "reference": _run(pyfuncitem, conftest, target, in_place)}
        record["variants"] = {
            key: _run(pyfuncitem, conftest, target, in_place, _adapted(variant, reference))
            for key, variant in table.items()
        }
        changing = {key for key, run in record["variants"].items() if not _same_calls(conftest, run, record)}
        record["variants"].update(
            {
                key: _run(pyfuncitem, conftest, target, in_place, _adapted(variant, reference))
                for key, variant in table.pairs(among=changing.__contains__).items()
            }
        )
        config.stash[_records][conftest.test_id(pyfuncitem)] = record
        conftest.seed()  # the test itself runs next, from the seed its fixture gave it
    return (yield)


def _progress(config: pytest.Config, line: str) -> None:
    path = config.getoption("record_progress")
    if path:
        with open(path, "a", encoding="utf-8") as written:
            written.write(line + "\n")


def pytest_collection_finish(session: pytest.Session) -> None:
    _progress(session.config, f"total {len(session.items)}")


def pytest_runtest_teardown(item: pytest.Item) -> None:
    _progress(item.config, f"done {item.nodeid}")


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = session.config.getoption("record_mistakes")
    if path:
        Path(path).write_text(json.dumps(session.config.stash[_records]), encoding="utf-8")


# -- in the grader's process: run it, keep what names a mistake --------------------------------------
@dataclass(frozen=True)
class Values:
    """What ships (`shipped`), and which catalogue ids the public tests can see and can name."""

    shipped: dict[str, Any]
    visible: dict[str, set[str]]  # id -> the tests that fail with it
    named: dict[str, set[str]]  # id -> the tests whose failure names it


def _text(value: Any) -> str:
    """A recorded value as canonical JSON: equal text, equal values (the public tests' conftest records a NaN
    as the string "nan", so no float that `same` finds unlike itself is ever recorded)."""
    return json.dumps(value, sort_keys=True)


class _Runs:
    """One test's runs (the reference's and each variant's), their calls compared as the public tests'
    `same` compares them, each distinct pair once.

    A test has up to a thousand variants, mostly giving the same inputs and differing in one call's answer
    (or in none: a few dozen distinct runs in all): runs of equal text are alike without a look, and two
    calls are compared field by field, the fields of equal text skipped.
    """

    def __init__(self, same: Callable[[Any, Any], bool], record: dict[str, Any]) -> None:
        self.same = same
        runs = {REFERENCE: record["reference"]["calls"]}
        runs |= {key: run["calls"] for key, run in record["variants"].items()}
        self.kind = {key: _text(calls) for key, calls in runs.items()}
        self.calls = {self.kind[key]: [_fields(call) for call in calls] for key, calls in runs.items()}
        self.kinds_alike = functools.cache(self._kinds_alike)
        self.failing = [
            key
            for key, run in record["variants"].items()
            if run["failed"] and run["calls"] and not self.alike(key, REFERENCE)
        ]
        self.twins = functools.cache(self._twins)

    def alike(self, a: str, b: str) -> bool:
        return self.kinds_alike(self.kind[a], self.kind[b])

    def _kinds_alike(self, a: str, b: str) -> bool:
        calls, theirs = self.calls[a], self.calls[b]
        return a == b or (len(calls) == len(theirs) and all(map(self._same_call, calls, theirs)))

    def _same_call(self, call: list[tuple[str, str, Any]], theirs: list[tuple[str, str, Any]]) -> bool:
        return [field for field, _, _ in call] == [field for field, _, _ in theirs] and all(
            text == other or self.same(value, their)
            for (_, text, value), (_, other, their) in zip(call, theirs, strict=True)
        )

    def _twins(self, kind: str) -> frozenset[str]:
        """The failing variants whose calls are alike those of `kind`."""
        return frozenset(key for key in self.failing if self.kinds_alike(kind, self.kind[key]))


REFERENCE = "\0reference"  # the reference's run among a test's runs: no variant's key


def _fields(call: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """A recorded call's fields ("inputs", "returned", ...) in order, each with its text."""
    return [(field, _text(value), value) for field, value in sorted(call.items())]


def select(records: dict[str, Any], same: Callable[[Any, Any], bool]) -> Values:
    """Keep, per test, the variants whose calls make it fail, differ from the reference's, and name one id."""
    tests: dict[str, Any] = {}
    visible: dict[str, set[str]] = {}
    named: dict[str, set[str]] = {}
    for test, record in records.items():
        runs = _Runs(same, record)
        ids = {key: set(catalogue.ids(key)) for key in runs.failing}
        kept: list[str] = []
        for key in runs.failing:
            mistakes = ids[key]
            if len(mistakes) == 1:  # a variant of two mistakes does not tell which one the test sees
                visible.setdefault(key.split(":")[0], set()).add(test)
            if mistakes != set.intersection(*(ids[twin] for twin in runs.twins(runs.kind[key]))):
                continue  # name only what every variant giving these calls has in common
            if not any(ids[other] == mistakes and runs.alike(key, other) for other in kept):
                kept.append(key)  # a form whose calls an earlier form already gives adds nothing
                for mistake in mistakes:
                    named.setdefault(mistake, set()).add(test)
        if kept:
            calls = {key: record["variants"][key]["calls"] for key in kept}
            tests[test] = {"function": record["function"], "in_place": record["in_place"], **_compact(calls)}
    parts = sorted({part for entry in tests.values() for key in entry["mistakes"] for part in key.split("+")})
    shipped = {"mistakes": {part: catalogue.feedback(part) for part in parts}, "tests": tests}
    return Values(shipped, visible, named)


def _compact(kept: dict[str, list[dict]]) -> dict[str, Any]:
    """A test's kept calls with each distinct input stored once ("inputs"), the calls naming theirs by index.

    The combinations of a test's mistakes repeat its inputs (and a combination's feedback its parts'): stored
    once, mistakes.json stays about the size it had before combinations of any size were recorded.
    """
    inputs: list[Any] = []
    index: dict[str, int] = {}
    mistakes = {}
    for key, calls in kept.items():
        mistakes[key] = []
        for call in calls:
            text = _text(call["inputs"])
            if text not in index:
                index[text] = len(inputs)
                inputs.append(call["inputs"])
            mistakes[key].append({**call, "inputs": index[text]})
    return {"inputs": inputs, "mistakes": mistakes}


def _environment(workdir: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST")}
    env.pop("PYTHONSAFEPATH", None)
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    # the copy's `exercises` before any other; then the folder this grader runs from, so the child records this
    # process's variants (an installed grader's folder is site-packages, already on the child's path)
    env["PYTHONPATH"] = os.pathsep.join([str(workdir), str(Path(__file__).resolve().parents[2])])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


Step = Callable[[int, int, str], None]  # (tests done, tests in all, the test just run)
_reporting: ContextVar[Step | None] = ContextVar("reporting", default=None)


@contextmanager
def reporting(step: Step) -> Iterator[None]:
    """Within: a recording of the public tests reports each test it ran to `step` (the release's progress)."""
    token = _reporting.set(step)
    try:
        yield
    finally:
        _reporting.reset(token)


def record(tests: Path = PUBLIC_TESTS) -> dict[str, Any]:
    """Run the public tests over the reference with the recorder; every test's records."""
    with tempfile.TemporaryDirectory(prefix="autograde-mistakes-") as folder:
        workdir = Path(folder)
        shutil.copytree(tests, workdir / "exercises" / "tests", ignore=shutil.ignore_patterns("__pycache__", "*.json"))
        for path in SOLUTIONS.glob("*.py"):
            shutil.copyfile(path, workdir / "exercises" / path.name)
        (workdir / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        out, lines = workdir / "records.json", workdir / "progress.txt"
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", __name__]
        command += [f"{OPTION}={out}", f"{PROGRESS}={lines}", "exercises/tests"]
        code, output = _run_child(command, workdir, lines)
        if code != 0 or not out.exists():
            raise RuntimeError(f"recording the public tests failed (exit {code}):\n{output[-3000:]}")
        return json.loads(out.read_text(encoding="utf-8"))


def _run_child(command: list[str], workdir: Path, lines: Path) -> tuple[int, str]:
    """Run the recording child within TIMEOUT, passing on its progress; its exit status and output."""
    step = _reporting.get() or (lambda *_: None)
    with tempfile.TemporaryFile("w+", encoding="utf-8") as output:
        child = subprocess.Popen(
            command, cwd=workdir, env=_environment(workdir), stdout=output, stderr=subprocess.STDOUT
        )
        deadline, seen = time.monotonic() + TIMEOUT, -1
        try:
            while child.poll() is None:
                seen = _report(lines, seen, step)
                if time.monotonic() > deadline:
                    raise subprocess.TimeoutExpired(command, TIMEOUT)
                time.sleep(POLL)
        finally:  # a timeout or an interruption: no recording child left running
            if child.poll() is None:
                child.kill()
                child.wait()
        _report(lines, seen, step)
        output.seek(0)
        return child.returncode, output.read()


def _report(lines: Path, seen: int, step: Step) -> int:
    """Pass on the tests the child finished since `seen` (how many were passed on; -1 before its count of tests
    was); returns the new `seen`."""
    written = lines.read_text(encoding="utf-8").splitlines() if lines.exists() else []
    total = next((int(line.split()[1]) for line in written if line.startswith("total ")), 0)
    if not total:
        return seen
    if seen < 0:
        step(0, total, "")
    done = [line.removeprefix("done ") for line in written if line.startswith("done ")]
    for count in range(max(seen, 0), len(done)):
        step(count + 1, total, done[count].split("/")[-1])
    return len(done)


@functools.cache
def values() -> Values:
    """The mistakes' values for the release, computed once per process."""
    return select(record(), public_conftest().same)


def public_conftest() -> ModuleType:
    """The public tests' conftest as a module: the release fingerprints and tells calls apart as the tests do."""
    from importlib import util

    spec = util.spec_from_file_location("public_conftest", PUBLIC_TESTS / "conftest.py")
    conftest = util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    return conftest

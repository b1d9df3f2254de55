"""The known mistakes' values on the public tests' own inputs: the release's `exercises/tests/mistakes.json`.

At release time the public tests run once, in a child process, over the reference modules, with
this module as a pytest plugin. Before each test runs as usual, its body runs once more for every
known-bug variant of the function it tests (`variants.BY_FUNCTION`), the function replaced by that
variant, then for every combination (two or more) of those that each change the test's calls on their own
(several mistakes in one function: `variants.Table.pairs`), and the public tests' own conftest records each
call: a fingerprint of its inputs, what it returned or raised. What ships is numbers and the
catalogue's feedback only: for each test, the calls of every variant (or combination) that makes the test
fail, differs from the reference and cannot be taken for another mistake's; each distinct input once per
test, each mistake's feedback once (a combination's is its parts'); and the grader's table of PyTorch's errors
explained (`checks.errors`), with which the public tests explain one the student's code raises. Nothing of the
hidden inputs or of any code but the public tests goes into it.
"""

import contextlib
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
from typing import IO, Any

import pytest

from autograder import stubs
from autograder.checks import catalogue, errors, variants
from autograder.locations import PUBLIC_TESTS, SOLUTIONS, recordings_folder
from autograder.release import recordings
from autograder.release.public_tests import todo_map

OPTION = "--record-mistakes"
PROGRESS = "--record-progress"  # the child appends a line per test to this file: the release's progress
TIMEOUT = 600  # seconds a recording child (one public test module) may take
POLL = 0.1  # seconds between two looks at the children: their progress, which of them is done


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
    modules = " ".join(Path(argument).name for argument in session.config.args)
    _progress(session.config, f"total {len(session.items)} {modules}")


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
    mistakes = {part: catalogue.feedback(part) for part in parts}
    shipped = {"mistakes": mistakes, "tests": tests, "errors": errors.shipped()}  # errors: PyTorch's, explained
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
    # one thread each, whatever the machine: the tests' tensors are small (torch computes them on one thread
    # anyway), and children with a pool of threads each spin waiting for one another's cores (twice the CPU on 2)
    env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = "1"
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


def record(tests: Path = PUBLIC_TESTS, cache: Path | None = None, jobs: int | None = None) -> dict[str, Any]:
    """Run the public tests over the reference with the recorder; every test's records, module by module in the
    order pytest collects them. Each module in a child process of its own (nothing another module does reaches
    its recording), `jobs` at once (by default one per core); a module whose recording `cache` holds for the very
    same inputs (recordings.py) is read back, not recorded, and each one recorded is kept there."""
    with tempfile.TemporaryDirectory(prefix="autograde-mistakes-") as folder:
        root = Path(folder)
        modules = {path.name: _workdir(root / path.stem, tests, path.name) for path in sorted(tests.glob("test_*.py"))}
        shared = recordings.common(_environment(root))  # before any child starts: what they will import
        keys = {module: recordings.key(workdir, shared) for module, workdir in modules.items()}
        found = {module: recordings.load(cache, module, keys[module]) for module in modules} if cache else {}
        kept = {module: entry for module, entry in found.items() if entry is not None}
        missing = [module for module in modules if module not in kept]
        last = {module: recordings.last_run(cache, module) for module in missing} if cache else {}
        waiting = {module: modules[module] for module in _longest_first(missing, tests, last)}
        made = _record_modules(waiting, kept, last, root, jobs or recordings.cores())
        if cache and made and recordings.common(_environment(root)) == shared:  # nothing changed while recording
            for module, entry in made.items():
                recordings.store(cache, module, keys[module], entry)
        entries = kept | made
        return {test: records for module in modules for test, records in entries[module].records.items()}


def _workdir(folder: Path, tests: Path, module: str) -> Path:
    """The child's folder for one public test module: the module and the public tests' other files (conftest.py;
    not the other test modules), the reference as `exercises/`, a pytest.ini. Its key digests all of it."""
    others = {path.name for path in tests.glob("test_*.py")} - {module}
    skipped = shutil.ignore_patterns("__pycache__", "*.json")

    def ignored(where: str, names: list[str]) -> set[str]:
        return set(skipped(where, names)) | (others if Path(where) == tests else set())

    shutil.copytree(tests, folder / "exercises" / "tests", ignore=ignored)
    for path in SOLUTIONS.glob("*.py"):
        shutil.copyfile(path, folder / "exercises" / path.name)
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    return folder


def _longest_first(modules: list[str], tests: Path, last: dict[str, recordings.Run | None]) -> list[str]:
    """The modules in the order their children start: the longest to record last time first (one never kept
    before them all), then the largest file, so that the last to finish is a short one."""

    def expected(module: str) -> tuple[bool, float, int]:
        run = last.get(module)
        return run is not None, -(run.seconds if run else 0.0), -(tests / module).stat().st_size

    return sorted(modules, key=expected)


@dataclass
class _Child:
    """A recording child: the module it records, where its records go, its process, output and start."""

    module: str
    out: Path
    process: subprocess.Popen
    output: IO[str]
    started: float

    def finished(self) -> bool:
        """Whether it is done; raises when it failed or ran past TIMEOUT."""
        if self.process.poll() is None:
            if time.monotonic() > self.started + TIMEOUT:
                raise subprocess.TimeoutExpired(self.process.args, TIMEOUT)
            return False
        if self.process.returncode != 0 or not self.out.exists():
            self.output.seek(0)
            text = self.output.read()[-3000:]
            raise RuntimeError(f"recording {self.module} failed (exit {self.process.returncode}):\n{text}")
        return True

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def _record_modules(
    folders: dict[str, Path],
    kept: dict[str, recordings.Entry],
    last: dict[str, recordings.Run | None],
    root: Path,
    jobs: int,
) -> dict[str, recordings.Entry]:
    """Record each module in its folder, in a child of its own, `jobs` at once, passing on their progress: the
    modules `kept` count as done from the start, and a module's tests as many as `last` time until its child
    has counted them; each module's entry."""
    lines = root / "progress.txt"
    expected = "".join(f"expect {run.tests} {module}\n" for module, run in last.items() if run is not None)
    cached = "".join(_from_cache(module, entry.tests) for module, entry in kept.items())
    lines.write_text(cached + expected, encoding="utf-8")
    seconds = _run_children(folders, root, lines, jobs)
    ran = lines.read_text(encoding="utf-8").splitlines()
    return {
        module: recordings.Entry(
            json.loads((root / f"{Path(module).stem}.json").read_text(encoding="utf-8")),
            sum(line.startswith(f"done exercises/tests/{module}::") for line in ran),
            seconds[module],
        )
        for module in folders
    }


def _run_children(folders: dict[str, Path], root: Path, lines: Path, jobs: int) -> dict[str, float]:
    """Run each module's child, `jobs` at once, passing on their progress; the seconds each took. Raises when one
    fails or runs past TIMEOUT."""
    step, seen = _reporting.get() or (lambda *_: None), -1
    waiting, running, seconds = list(folders), [], {}
    with contextlib.ExitStack() as outputs:
        try:
            while waiting or running:
                while waiting and len(running) < jobs:
                    output = outputs.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8"))
                    running.append(_start(waiting.pop(0), folders, root, lines, output))
                seen = _report(lines, seen, step)
                for child in [child for child in running if child.finished()]:
                    running.remove(child)
                    seconds[child.module] = time.monotonic() - child.started
                time.sleep(POLL if running else 0)
        finally:  # a failure, a timeout or an interruption: no recording child left running
            for child in running:
                child.stop()
    _report(lines, seen, step)
    return seconds


def _from_cache(module: str, tests: int) -> str:
    """The progress lines of a module read from the cache: its tests, done."""
    return f"total {tests} {module}\n" + f"done {module}: unchanged, read from the cache\n" * tests


def _start(module: str, folders: dict[str, Path], root: Path, lines: Path, output: IO[str]) -> _Child:
    """Start the child that records one module in its folder (its records to the root, beside its folder)."""
    out = root / f"{Path(module).stem}.json"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", __name__]
    command += [f"{OPTION}={out}", f"{PROGRESS}={lines}", f"exercises/tests/{module}"]
    workdir = folders[module]
    process = subprocess.Popen(command, cwd=workdir, env=_environment(workdir), stdout=output, stderr=subprocess.STDOUT)
    return _Child(module, out, process, output, time.monotonic())


def _report(lines: Path, seen: int, step: Step) -> int:
    """Pass on the tests the children finished since `seen` (how many were passed on; -1 before any count of tests
    was), out of the tests of every module: as its child counted them ("total N MODULE"), else as many as the
    last time ("expect N MODULE"); returns the new `seen`."""
    written = lines.read_text(encoding="utf-8").splitlines() if lines.exists() else []
    counted = [line.split()[1:] for line in written if line.startswith("total ")]
    expected = [line.split()[1:] for line in written if line.startswith("expect ")]
    named = {words[1] for words in counted if len(words) > 1}
    total = sum(int(words[0]) for words in counted) + sum(int(n) for n, module in expected if module not in named)
    if not total:
        return seen
    if seen < 0:
        step(0, total, "")
    done = [line.removeprefix("done ") for line in written if line.startswith("done ")]
    for count in range(max(seen, 0), len(done)):
        step(count + 1, total, done[count].split("/")[-1])
    return len(done)


_caching: ContextVar[bool] = ContextVar("caching", default=True)


@contextmanager
def caching(on: bool) -> Iterator[None]:
    """Within: the release reads and keeps the public tests' recordings in its cache (`on`, the default), or records
    every public test module again and keeps nothing (`autograde release --no-cache`)."""
    token = _caching.set(on)
    try:
        yield
    finally:
        _caching.reset(token)


def cache_folder() -> Path | None:
    """Where the release reads and keeps its recordings: locations.recordings_folder, None within caching(False)."""
    return recordings_folder() if _caching.get() else None


def values() -> Values:
    """The mistakes' values for the release, computed once per process and cache folder."""
    return _values(cache_folder())


@functools.cache
def _values(cache: Path | None) -> Values:
    return computed(cache)


def computed(cache: Path | None) -> Values:
    """The mistakes' values, each public test module's recording read from `cache` when it holds the recording of
    the very same inputs (None: every module recorded, nothing kept)."""
    return select(record(cache=cache), public_conftest().same)


def public_conftest() -> ModuleType:
    """The public tests' conftest as a module: the release fingerprints and tells calls apart as the tests do."""
    from importlib import util

    spec = util.spec_from_file_location("public_conftest", PUBLIC_TESTS / "conftest.py")
    conftest = util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    return conftest

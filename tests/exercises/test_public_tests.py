"""The public tests shipped to students: all green on the reference, all red on the stubs, naming the TODO.

Each run copies a package `exercises/` (the reference modules or the stubs, plus the public tests in
`exercises/tests/`) into a temporary directory and runs pytest there in a subprocess, the way a student
runs it in their repository. The editable install of this project also provides a package named
`exercises` (the stubs): the temporary directory is put first on the path, and a check confirms that
the copy is the package imported.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder import stubs
from autograder.checks import errors

pytestmark = pytest.mark.release  # each test runs the released public tests in a child interpreter

ROOT = Path(__file__).resolve().parents[2]
PUBLIC_TESTS = ROOT / "exercises" / "tests"
TODO_LABEL = re.compile(r"TODO \d+ ·")
TIMEOUT = 300  # seconds; the suite itself takes a few
PYTEST = ("-m", "pytest", "-q", "-p", "no:cacheprovider")  # how a student runs it, without writing a cache


@dataclass(frozen=True)
class Case:
    """One test case of a junit report."""

    module: str  # "test_recurrence"
    name: str  # "test_it_returns_output_and_final_state_shapes"
    outcome: str  # "passed", "failure", "error" or "skipped"
    message: str  # the failure's or error's message and text; "" when it passed


@dataclass(frozen=True)
class Run:
    returncode: int
    output: str
    imported_from: Path
    cases: list[Case]


def _cases(junit: Path) -> list[Case]:
    cases = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            child = case.find(tag)
            if child is not None:
                outcome, message = tag, f"{child.get('message', '')}\n{child.text or ''}"
                break
        module = case.get("classname", "").rsplit(".", 1)[-1]
        cases.append(Case(module, case.get("name", ""), outcome, message))
    return cases


def _run_public_suite(workdir: Path, modules: Path, import_mode: str, released: dict | None = None) -> Run:
    """Copy `modules`/*.py and the public tests into workdir/exercises/ and run pytest on them (with `released`
    as their mistakes.json when given)."""
    package = workdir / "exercises"
    shutil.copytree(PUBLIC_TESTS, package / "tests", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    if released is not None:
        (package / "tests" / "mistakes.json").write_text(json.dumps(released), encoding="utf-8")
    for module in sorted(modules.glob("*.py")):
        shutil.copy2(module, package / module.name)
    (workdir / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # stop pytest's search for a config here

    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST")}
    env.pop("PYTHONSAFEPATH", None)
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # a student's plain environment: no third-party pytest plugins
    env["PYTHONPATH"] = str(workdir)  # before site-packages, where the editable install maps `exercises`
    env["PYTHONDONTWRITEBYTECODE"] = "1"

    def run(*arguments: str) -> subprocess.CompletedProcess:
        command = [sys.executable, *arguments]
        return subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=TIMEOUT)

    where = run("-c", "import exercises; print(exercises.__file__)")  # the same path as the pytest run below
    assert where.returncode == 0, where.stderr
    junit = workdir / "junit.xml"
    result = run(*PYTEST, f"--import-mode={import_mode}", f"--junitxml={junit}", "exercises/tests")
    output = result.stdout + result.stderr
    assert junit.exists(), f"pytest wrote no junit report (exit {result.returncode}):\n{output[-3000:]}"
    return Run(result.returncode, output, Path(where.stdout.strip()).resolve(), _cases(junit))


def _failed_in_one_line(case: Case, line: re.Pattern) -> bool:
    """The junit failure of pytest.fail(line, pytrace=False): its message "Failed: <line>", its text the line."""
    message, _, text = case.message.partition("\n")
    return message == f"Failed: {text}" and line.fullmatch(text) is not None


def _assert_imported_the_copy(run: Run, workdir: Path) -> None:
    expected = (workdir / "exercises" / "__init__.py").resolve()
    assert run.imported_from == expected, f"the suite would import {run.imported_from}, not the copy at {expected}"


@pytest.fixture(scope="module", params=["importlib", "prepend"])
def reference_run(request, tmp_path_factory) -> tuple[Run, Path]:
    workdir = tmp_path_factory.mktemp(f"reference-{request.param}")
    return _run_public_suite(workdir, ROOT / "solutions", request.param), workdir


@pytest.fixture(scope="module")
def stub_run(tmp_path_factory) -> tuple[Run, Path]:
    workdir = tmp_path_factory.mktemp("stubs")
    return _run_public_suite(workdir, ROOT / "exercises", "importlib"), workdir


def test_it_passes_every_public_test_on_the_reference(reference_run):
    """Every public test passes when `exercises/` holds the reference solutions (both pytest import modes)."""
    run, workdir = reference_run
    _assert_imported_the_copy(run, workdir)
    assert run.cases, f"no public test ran:\n{run.output[-3000:]}"
    not_passed = [
        f"{case.module}::{case.name} {case.outcome}\n{case.message[-1500:]}"
        for case in run.cases
        if case.outcome != "passed"
    ]
    assert not not_passed, "\n\n".join(not_passed)
    assert run.returncode == 0, run.output[-3000:]


def test_it_fails_every_public_test_on_the_stubs_naming_the_todo(stub_run):
    """On the untouched stubs every public test fails (no errors, no skips) and its failure names 'TODO N ·'."""
    run, workdir = stub_run
    _assert_imported_the_copy(run, workdir)
    assert run.cases, f"no public test ran:\n{run.output[-3000:]}"
    not_failed = [f"{case.module}::{case.name}: {case.outcome}" for case in run.cases if case.outcome != "failure"]
    assert not not_failed, "every public test should fail (not pass, error or skip) on the stubs:\n" + "\n".join(
        not_failed
    )
    unnamed = [
        f"{case.module}::{case.name}\n{case.message[-800:]}"
        for case in run.cases
        if not TODO_LABEL.search(case.message)
    ]
    assert not unnamed, "a failure on the stubs should name its TODO ('TODO N · ...'):\n\n" + "\n\n".join(unnamed)


def test_on_the_stubs_each_failure_is_one_line_naming_the_todo_and_where_its_stub_raised(stub_run):
    """A TODO not written yet fails each of its tests in one line, without the traceback of the stub's docstring."""
    run, _ = stub_run
    one_line = re.compile(r"TODO \d+ · [^:\n]+: not implemented yet \(exercises/\w+\.py, line \d+, in \w+\)")
    longer = [
        f"{case.module}::{case.name}\n{case.message[-800:]}"
        for case in run.cases
        if not _failed_in_one_line(case, one_line)
    ]
    assert not longer, "a stub's failure should be its one line:\n\n" + "\n\n".join(longer)
    assert "Traceback" not in run.output and "During handling" not in run.output and '"""' not in run.output


def test_the_public_suite_has_tests_for_every_exercise_module(stub_run):
    """Each module with a TODO has a public test file test_<module>.py that collected at least one test."""
    run, _ = stub_run
    collected = {case.module for case in run.cases}
    modules = sorted({todo.module for todo in stubs.todos()})
    missing = [module for module in modules if f"test_{module}" not in collected]
    assert not missing, f"no public test for: {missing} (collected {sorted(collected)})"


def test_every_todo_is_named_by_some_public_test_on_the_stubs(stub_run):
    """Every TODO of the week is reached by at least one public test: its label shows up in a stub failure."""
    run, _ = stub_run
    failures = "\n".join(case.message for case in run.cases)
    unnamed = [todo.label for todo in stubs.todos() if f"{todo.label}:" not in failures]
    assert not unnamed, f"no public test reaches these TODOs: {unnamed}"


# -- another TODO's function that a failing test uses: said first, from its own tests (no reference shipped) --
MASKED_MEAN_IN_FLOAT64 = """

def masked_mean(output, lengths):
    mask = np.arange(output.shape[1])[None, :] < lengths.numpy()[:, None]
    total = (output * torch.from_numpy(mask[:, :, None])).sum(dim=1)  # a NumPy mask: float64 from here on
    return total / torch.from_numpy(lengths.numpy()[:, None].astype(np.float64))
"""
FORWARD_THROUGH_MASKED_MEAN = """
from exercises.padding import masked_mean


def _forward(self, tokens, lengths=None):
    if lengths is None:
        lengths = torch.full((tokens.shape[0],), tokens.shape[1], dtype=torch.long)
    output, _ = self.rnn(self.embedding(tokens))
    real = (torch.arange(tokens.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(2)
    if self.pooling == "last":
        pooled = output[:, -1]  # the last step, padding or not: wrong, and no call of masked_mean
    elif self.pooling == "mean":
        pooled = masked_mean(output, lengths)
    else:
        pooled = output.masked_fill(~real, float("-inf")).amax(dim=1)
    return self.head(pooled)


SequenceClassifier.forward = _forward
"""


@pytest.fixture(scope="module")
def float64_masked_mean_run(tmp_path_factory) -> Run:
    modules = tmp_path_factory.mktemp("modules")
    for path in (ROOT / "solutions").glob("*.py"):
        shutil.copy2(path, modules / path.name)
    padding = (modules / "padding.py").read_text(encoding="utf-8")
    (modules / "padding.py").write_text(f"import numpy as np\n{padding}{MASKED_MEAN_IN_FLOAT64}", encoding="utf-8")
    with (modules / "classifier.py").open("a", encoding="utf-8") as classifier:
        classifier.write(FORWARD_THROUGH_MASKED_MEAN)
    return _run_public_suite(tmp_path_factory.mktemp("float64"), modules, "importlib")


def test_a_failing_test_says_first_that_another_todos_function_it_called_fails_its_own_tests(float64_masked_mean_run):
    """masked_mean returns float64: the classifier's mean-pooling tests fail, and say masked_mean is why; its
    last-pooling tests, failing for a mistake of their own, never called masked_mean and do not blame it."""
    failed = [case for case in float64_masked_mean_run.cases if case.outcome != "passed"]
    classifier = [case for case in failed if case.module == "test_classifier"]
    mean = [case for case in classifier if "mean" in case.name]
    assert mean, "no mean-pooling test of the classifier failed with a float64 masked_mean"
    for case in mean:
        assert "masked_mean (padding.py) is wrong: test_masked_mean_" in case.message, case.message  # its own test
        assert "float64" in case.message and "; fix it first, this test uses it" in case.message, case.message
    last = [case for case in classifier if "mean" not in case.name]
    assert last, "no last-pooling test of the classifier failed with the last step of the padding"
    assert all("is wrong:" not in case.message for case in last), "\n\n".join(case.message for case in last)
    assert {case.module for case in failed} == {"test_classifier", "test_padding"}
    assert all("is wrong:" not in case.message for case in failed if case.module == "test_padding")


# -- an error PyTorch raises in the student's code: the line of their file, and what it means ------------------
RNN_WITHOUT_THE_TRANSPOSE = """

def rnn_forward(x, weight_ih, weight_hh, bias_ih, bias_hh, h0=None):
    h = x.new_zeros(x.shape[0], weight_hh.shape[0]) if h0 is None else h0[0]
    states = []
    for t in range(x.shape[1]):
        h = torch.tanh(x[:, t] @ weight_ih + bias_ih + h @ weight_hh.T + bias_hh)
        states.append(h)
    return torch.stack(states, dim=1), h.unsqueeze(0)
"""


@pytest.fixture(scope="module")
def shapes_error_run(tmp_path_factory) -> Run:
    modules = tmp_path_factory.mktemp("modules")
    for path in (ROOT / "solutions").glob("*.py"):
        shutil.copy2(path, modules / path.name)
    with (modules / "recurrence.py").open("a", encoding="utf-8") as recurrence:
        recurrence.write(RNN_WITHOUT_THE_TRANSPOSE)
    released = {"mistakes": {}, "tests": {}, "errors": errors.shipped()}  # the table alone: no mistake's values
    return _run_public_suite(tmp_path_factory.mktemp("shapes"), modules, "importlib", released)


def test_a_test_failing_on_pytorchs_error_shows_the_line_of_the_students_file_and_what_it_means(shapes_error_run):
    raised = [case for case in shapes_error_run.cases if "mat1 and mat2 shapes cannot be multiplied" in case.message]
    assert raised, "no public test of rnn_forward met its shapes error"
    line = len((ROOT / "solutions" / "recurrence.py").read_text(encoding="utf-8").splitlines()) + 7
    for case in raised:
        assert f'File "exercises/recurrence.py", line {line}, in rnn_forward' in case.message, case.message
        assert f"{errors.MEANING}in A @ B, A's columns must equal B's rows" in case.message, case.message

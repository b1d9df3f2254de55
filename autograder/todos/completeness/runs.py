"""The pytest runs of `autograde todo check` in other processes: how each is started, and its cases' outcomes
read from its JUnit XML report."""

import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from autograder.todos.completeness.findings import Outcome
from autograder.todos.completeness.words import first_line

PYTEST_TIMEOUT = 600  # seconds one of its pytest runs may take (the public tests of the week: about 20)


def run_pytest(folder: Path, files: list[str], options: list[str], environment: dict[str, str]) -> list[Outcome]:
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
        message = first_line(problems[0].get("message", "") if problems else "skipped" if skipped else "")
        found.append(Outcome(test, not problems and not skipped, message))
    return found


def environment(public: bool) -> dict[str, str]:
    """A pytest run's environment: nothing of a pytest this runs inside; one thread (the checks here run beside
    it); a public one as a student runs it (no plugin of this machine's, no bytecode written)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST")}
    env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = "1"
    if public:
        env |= {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    return env

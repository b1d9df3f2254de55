"""Run a student repository's public tests over many submissions, in one interpreter (torch imported once).

    python public_runs.py RELEASE JOBS.json OUT.json

RELEASE is a released student repository; JOBS.json a list of {"name", "modules": {module: source},
"tests": [test file names]}. For each job, a folder gets the release's `exercises/` with the job's
modules written over it, and pytest runs the named public test files there, in process, as a student
runs them (plugins not autoloaded, the release's conftest and values in force). OUT.json maps each
job's name to {"test_module::test_name[params]": [outcome, the failure message's first line and every
later line that names a catalogue mistake]}.
"""

import gc
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

NAMED = re.compile(r"\[[A-Z]\d\] ")  # a line that names a catalogue mistake


class Outcomes:
    """Each test's outcome and its failure's first line, as pytest reports them."""

    def __init__(self) -> None:
        self.found: dict[str, list[str]] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" or report.failed:
            crash = getattr(report.longrepr, "reprcrash", None)
            message = crash.message if crash is not None else str(report.longrepr or "")
            name = report.nodeid.split("/")[-1].replace(".py::", "::")
            if report.failed or name not in self.found:
                lines = [line.removeprefix("AssertionError: ") for line in message.splitlines() if line.strip()]
                named = [line for line in lines[1:] if NAMED.match(line)]  # a pair's second mistake
                self.found[name] = [report.outcome, "\n".join(lines[:1] + named)]


def _forget_imports() -> None:
    """Drop the previous job's modules: the next job's `exercises` is another folder."""
    for name in [name for name in sys.modules if name.split(".")[0] in ("exercises", "conftest")]:
        del sys.modules[name]


def run(release: Path, job: dict, scratch: Path) -> dict[str, list[str]]:
    folder = scratch / job["name"]
    shutil.copytree(release / "exercises", folder / "exercises")
    for module, source in job["modules"].items():
        (folder / "exercises" / f"{module}.py").write_text(source, encoding="utf-8")
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    _forget_imports()
    sys.path.insert(0, str(folder))
    outcomes = Outcomes()
    try:
        tests = [str(folder / "exercises" / "tests" / name) for name in job["tests"]]
        pytest.main(
            ["-q", "-p", "no:cacheprovider", "--import-mode=importlib", f"--rootdir={folder}", *tests],
            plugins=[outcomes],
        )
        imported = Path(sys.modules["exercises"].__file__).resolve()
        assert imported.is_relative_to(folder.resolve()), f"{job['name']}: the tests imported {imported}"
    finally:
        sys.path.remove(str(folder))
    return outcomes.found


def main(argv: list[str]) -> int:
    release, jobs, out = Path(argv[1]), json.loads(Path(argv[2]).read_text(encoding="utf-8")), Path(argv[3])
    import torch  # once, for every job; one thread, as the grader's worker: tiny tensors gain nothing from more

    torch.set_num_threads(1)
    results = {}
    with tempfile.TemporaryDirectory(prefix="public-runs-") as scratch:
        for job in jobs:
            # pytest collects every generation's garbage five times at each session's end (its unraisable-
            # exception check): frozen, what earlier jobs left (and torch's own objects) is not walked again
            gc.freeze()
            results[job["name"]] = run(release, job, Path(scratch))
    out.write_text(json.dumps(results), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""Each test's CPU time, written to a JSON file: a pytest plugin for bench_suite.py's profile.

    PYTHONPATH=$PWD:$PWD/benchmarks python -m pytest -p cpu_profile --cpu-profile=profile.json

A test's CPU is what its process spent (user + system) from the start of its set-up to the end of
its teardown, plus what the processes it started and waited for spent in that time (the worker of a
grading, a pytest in a subprocess, a venv's pip): `resource.getrusage` of the process and of its
children, before and after. A session fixture's work is charged to the first test that asks for it
(a grading shared by `once_per_run` to the process that made it; the others wait on a lock, which
costs nothing). Under xdist each test process measures its own tests and the numbers travel to the
controller with the test's report (`user_properties`), which writes the file once at the end; what a
test process spends outside any test (collection, imports) is in the file's "outside tests".
Nothing of the suite depends on this plugin: it is loaded only with `-p cpu_profile`.
"""

import json
import os
import resource
from collections.abc import Iterator
from pathlib import Path

import pytest

KEY = "cpu_profile_seconds"
STARTED = pytest.StashKey[float]()


def cpu_now() -> float:
    """CPU seconds (user + system) of this process and of every child it has waited for, so far."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--cpu-profile", metavar="PATH", help="write each test's CPU seconds to PATH (JSON)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """Measure set-up, call and teardown together; the number rides on the teardown's report."""
    item.stash[STARTED] = cpu_now()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    if call.when == "teardown" and STARTED in item.stash:
        outcome.get_result().user_properties.append((KEY, cpu_now() - item.stash[STARTED]))


class Recorder:
    """On the controller (or the only process): the tests' numbers, written at the end."""

    def __init__(self, path: Path) -> None:
        self.path, self.tests, self.started = path, {}, cpu_now()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for key, value in report.user_properties:
            if key == KEY:
                self.tests[report.nodeid] = self.tests.get(report.nodeid, 0.0) + value

    def pytest_unconfigure(self) -> None:
        total = cpu_now() - self.started  # under xdist: the controller and the test processes it waited for
        measured = sum(self.tests.values())
        record = {"total": total, "outside tests": max(total - measured, 0.0), "tests": self.tests}
        self.path.write_text(json.dumps(record, indent=1, sort_keys=True))


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("--cpu-profile")
    if path and not os.environ.get("PYTEST_XDIST_WORKER"):
        config.pluginmanager.register(Recorder(Path(path).resolve()), "cpu_profile_recorder")

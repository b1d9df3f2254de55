"""Which module the next free test process takes: the one that took longest in the last run like this one.

Under `--dist loadscope` xdist hands out whole modules (the corpus and the attacks grade once per module),
the ones with the most tests first. A module of few long tests (the worker's: a couple of dozen tests, a
minute) then starts late, and at the end one process runs it while the other waits. This plugin, on the
controller, records how long each module's tests took (pytest's cache, .pytest_cache: one record per `-m`
expression, since the fast loop runs only part of each module) and hands out the longest remaining module
first: the usual rule for two machines and jobs of known lengths. A module the record does not name goes
before those it names (it may be long), in xdist's own order; so does everything on a fresh clone, where
there is no record and xdist's order is kept whole. Only the order changes: which tests run, and how, never.
"""

import math
from collections import OrderedDict, defaultdict

import pytest

RECORD = "autograde/module-seconds"  # in pytest's cache: {-m expression: {module: seconds}}


class LongestFirst(OrderedDict):
    """A work queue (scope -> its tests) whose next unit is the one that took longest in `seconds`; one it does
    not name comes first; equal ones in the order they came."""

    def __init__(self, seconds: dict[str, float]) -> None:
        super().__init__()
        self.seconds = seconds

    def popitem(self, last: bool = True) -> tuple:
        scope = max(self, key=lambda scope: self.seconds.get(scope, math.inf))  # max keeps the first of equals
        return scope, self.pop(scope)


class Recorder:
    """On xdist's controller: each module's seconds this run, kept for the next."""

    def __init__(self, config: pytest.Config) -> None:
        self.config, self.seconds, self.scheduler = config, defaultdict(float), None
        self.expression = config.getoption("markexpr", "") or ""
        self.last = (config.cache.get(RECORD, {}) if config.cache else {}).get(self.expression, {})

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.scheduler is not None:  # a module as loadscope itself splits it (a test id may hold "::")
            self.seconds[self.scheduler._split_scope(report.nodeid)] += report.duration

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: object) -> object | None:
        if config.getoption("dist", "no") != "loadscope":
            return None  # another distribution: xdist's own scheduler
        from xdist.scheduler import LoadScopeScheduling

        self.scheduler = LoadScopeScheduling(config, log)
        self.scheduler.workqueue = LongestFirst(self.last)
        return self.scheduler

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        finished = exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
        if self.config.cache is None or not finished or session.shouldstop or not self.seconds:
            return  # an interrupted run's seconds would say its modules were short
        record = self.config.cache.get(RECORD, {})
        record[self.expression] = {**self.last, **self.seconds}
        self.config.cache.set(RECORD, record)


def register(config: pytest.Config) -> None:
    """Register the recorder and the scheduler in the main process (xdist's workers report to it)."""
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(Recorder(config), "longest-first")

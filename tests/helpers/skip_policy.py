"""A pytest plugin for `.ci/run`: a skip whose reason is not on the allow-list fails the run.

A skipped test proves nothing, so where CI runs every test must run. `.ci/run` names the
allow-list file in the environment variable below; each of its lines (blank lines and `#`
comments aside) is a regular expression that a skip's reason must match whole. Without the
variable (a developer's run) the plugin does nothing. An expected failure (xfail) is not a skip.
"""

import os
import re
from pathlib import Path

import pytest

ALLOW_LIST = "CI_ALLOWED_SKIPS"  # the environment variable naming the allow-list file


def allowed_reasons(path: Path) -> list[re.Pattern[str]]:
    """The allow-list's patterns, one per line that is neither blank nor a comment."""
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [re.compile(line) for line in lines if line and not line.startswith("#")]


def skip_reason(report: pytest.CollectReport | pytest.TestReport) -> str:
    """The reason a skipped report gives (pytest keeps it as (path, line, "Skipped: reason"))."""
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    return reason.removeprefix("Skipped: ")


class SkipPolicy:
    """Collects the skips the allow-list does not name; fails the session when there are any."""

    def __init__(self, allow_list: Path) -> None:
        self.allow_list = allow_list
        self.allowed = allowed_reasons(allow_list)
        self.refused: list[tuple[str, str]] = []  # (test id, reason)

    def _check(self, report: pytest.CollectReport | pytest.TestReport) -> None:
        if not report.skipped or hasattr(report, "wasxfail"):
            return
        reason = skip_reason(report)
        if not any(pattern.fullmatch(reason) for pattern in self.allowed):
            self.refused.append((report.nodeid, reason))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._check(report)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        self._check(report)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.refused and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.refused:
            return
        terminalreporter.section(f"skips not allowed by {self.allow_list}: the run fails", red=True, bold=True)
        for nodeid, reason in self.refused:
            terminalreporter.line(f"{nodeid}: {reason}")
        terminalreporter.line("Install what these tests need in .ci/run, or allow the reason, saying why.")


def register(config: pytest.Config) -> None:
    """Register the policy when the environment names an allow-list (in the main process only, not xdist's workers)."""
    path = os.environ.get(ALLOW_LIST)
    if path and not hasattr(config, "workerinput"):
        config.pluginmanager.register(SkipPolicy(Path(path)), "skip-policy")


def pytest_configure(config: pytest.Config) -> None:  # as a plugin of its own: `pytest -p skip_policy`
    register(config)

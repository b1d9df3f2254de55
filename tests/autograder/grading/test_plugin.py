"""The hidden suites run under the grading plugin: each item's outcome read from its test's own exception."""

import pytest
from _pytest._code.code import ExceptionInfo

from autograder import rubric
from autograder.grading.grade import run_suites
from autograder.grading.results import Failure
from autograder.student import InProcess, in_package

SELECTED = rubric.load().select(["gather_final", "masked_mean"])


@pytest.fixture
def styles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The traceback style of every report pytest makes of a failure while the test runs."""
    asked: list[str] = []
    real = ExceptionInfo.getrepr

    def getrepr(self, *arguments, **options):
        asked.append(options.get("style", "long"))
        return real(self, *arguments, **options)

    monkeypatch.setattr(ExceptionInfo, "getrepr", getrepr)
    return asked


def test_it_reads_each_failed_item_from_its_exception_with_no_traceback_formatted(styles):
    outcomes = run_suites(InProcess(in_package("exercises")), SELECTED)  # the stubs: every item fails
    assert sorted(outcomes) == sorted(item.name for item in SELECTED.items)
    for name, outcome in outcomes.items():
        assert not outcome.passed and outcome.failure is Failure.NOT_DONE, name
        assert "is not done yet" in outcome.feedback, f"{name}: {outcome.feedback!r}"
    # pytest still makes its report of each failure, but with no traceback: its source lines cost the
    # grader CPU on every failed item and no one reads them
    assert len(styles) == len(outcomes) and set(styles) == {"no"}, styles


def test_it_passes_the_reference_with_no_report_of_a_failure_made(styles):
    outcomes = run_suites(InProcess(in_package("solutions")), SELECTED)
    assert all(outcome.passed and outcome.feedback == "" for outcome in outcomes.values()), outcomes
    assert styles == []

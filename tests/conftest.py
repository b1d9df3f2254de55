"""Fixtures shared by the project's tests."""

from collections.abc import Callable
from pathlib import Path

import pytest
import skip_policy
from support import EXERCISES, SOLUTIONS, build_submission, grade

from autograder.grading.results import GradingResult


def pytest_configure(config: pytest.Config) -> None:
    skip_policy.register(config)  # .ci/run: a skip whose reason is not on .ci/allowed-skips fails the run


@pytest.fixture
def submission(tmp_path: Path) -> Callable[..., Path]:
    """Build a submission in a fresh folder: submission(edits={...}, base=...)."""
    counter = iter(range(1000))

    def make(edits: dict[str, str] | None = None, base: Path = SOLUTIONS) -> Path:
        return build_submission(tmp_path / f"submission{next(counter)}", base, edits)

    return make


@pytest.fixture(scope="session")
def reference_result(tmp_path_factory: pytest.TempPathFactory) -> GradingResult:
    """The reference graded once per session."""
    return grade(build_submission(tmp_path_factory.mktemp("reference")))


@pytest.fixture(scope="session")
def stub_result(tmp_path_factory: pytest.TempPathFactory) -> GradingResult:
    """The untouched stubs graded once per session."""
    return grade(build_submission(tmp_path_factory.mktemp("stubs"), EXERCISES))

"""Fixtures shared by the project's tests."""

from collections.abc import Callable
from pathlib import Path

import pytest
from support import EXERCISES, SOLUTIONS, build_submission, grade

from autograder.results import GradingResult


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

"""Fixtures shared by the project's tests."""

import functools
from collections.abc import Callable, Iterator
from pathlib import Path

import keep_bytecode  # noqa: F401  (first: every module imported after it keeps its bytecode)
import longest_first
import markers
import pytest
import skip_policy
from once_per_run import run_folder, shared
from support import EXERCISES, SOLUTIONS, build_submission, grade

from autograder.grading.results import GradingResult
from autograder.release import public_mistakes


def pytest_configure(config: pytest.Config) -> None:
    skip_policy.register(config)  # .ci/run: a skip whose reason is not on .ci/allowed-skips fails the run
    config.pluginmanager.register(markers, "markers")  # which test is which kind of long work
    longest_first.register(config)  # under xdist: the module that took longest last time starts first


@pytest.fixture
def submission(tmp_path: Path) -> Callable[..., Path]:
    """Build a submission in a fresh folder: submission(edits={...}, base=...)."""
    counter = iter(range(1000))

    def make(edits: dict[str, str] | None = None, base: Path = SOLUTIONS) -> Path:
        return build_submission(tmp_path / f"submission{next(counter)}", base, edits)

    return make


@pytest.fixture(scope="session")
def reference_result(tmp_path_factory: pytest.TempPathFactory) -> GradingResult:
    """The reference graded once per run (every test process reads the same grading)."""
    folder = tmp_path_factory.mktemp("reference")
    return shared(run_folder(tmp_path_factory), "reference", lambda: grade(build_submission(folder)))


@pytest.fixture(scope="session")
def stub_result(tmp_path_factory: pytest.TempPathFactory) -> GradingResult:
    """The untouched stubs graded once per run."""
    folder = tmp_path_factory.mktemp("stubs")
    return shared(run_folder(tmp_path_factory), "stubs", lambda: grade(build_submission(folder, EXERCISES)))


@pytest.fixture(scope="session", autouse=True)
def mistakes_recorded_once(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The known mistakes' values on the public tests' inputs (what a release ships, about 30 s of CPU)
    recorded once per run, not once per test process that releases; nothing is recorded until asked."""
    recorded = public_mistakes.values
    folder = run_folder(tmp_path_factory)
    public_mistakes.values = functools.cache(lambda: shared(folder, "public-mistakes", recorded))
    yield
    public_mistakes.values = recorded

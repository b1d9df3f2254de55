"""The fixtures of the tests of `autograde todo check`: the records copied, to break."""

import shutil
from pathlib import Path

import pytest

from autograder.locations import TODOS


@pytest.fixture
def folders(tmp_path: Path) -> Path:
    """A copy of every exercise's record, to break."""
    copy = tmp_path / "todos"
    shutil.copytree(TODOS, copy, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return copy

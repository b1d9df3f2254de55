"""What many tests need and costs a grading or more to compute: made once per run, shared by its processes.

The first test process of a run (an xdist worker, or the only process) that asks for a value makes it
under an exclusive lock and writes it beside the run's temporary folders; every other process waits
on that lock and reads it back. A run is one `pytest` invocation, so what the value depends on (the
checkout's files) cannot change under it; a value that fails to be made is not written, and the next
process to ask tries again.
"""

import fcntl
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")


def run_folder(factory: pytest.TempPathFactory) -> Path:
    """The folder every process of this run shares: the workers' basetemps' parent under xdist."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def shared(folder: Path, name: str, make: Callable[[], T]) -> T:
    """`make()`, made by the first process of the run that asks, read back by the others."""
    path = folder / f"{name}.pickle"
    with open(folder / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, whatever happens
        if path.exists():
            return pickle.loads(path.read_bytes())
        value = make()
        partial = path.with_suffix(".partial")
        partial.write_bytes(pickle.dumps(value))
        partial.rename(path)
        return value

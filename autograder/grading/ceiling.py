"""The grading process's own memory ceiling: what checking an answer may cost the grader is bounded.

Every tensor an answer brings is checked before the grader computes with it (runtime/codec.py, the checks),
so an answer's cost is bounded by its size; this is the bound behind that one, in every tier (Docker's
defaults included, where the grader has no cgroup): the grading process sets its own data limit (RLIMIT_DATA,
soft: heap and private mappings, what an allocation takes) to the rubric's `grader_memory_mb`, well under a
Gradescope container's 768 MB. An allocation past it fails (MemoryError, or torch's "can't allocate memory")
and the item being checked fails with `OUT_OF_MEMORY` (grading/plugin.py), never the grading. The chain
the grader starts inherits the soft limit; its processes lift it (runtime/serve.lift_data_ceiling) and each
worker sets its own, the rubric's `memory_mb`.

Set by the command that grades (`grade_by`: `grade`, each grading process of `grade-all`, Gradescope's run), in a
process that starts out well under the ceiling; a process that already holds half of it (a test process that
calls the command in-process, holding whatever its earlier tests left) keeps its own limits, and results.json
says which (`grader_memory_bytes`, null where none was set).
"""

import contextlib
import os
import resource
from collections.abc import Iterator

from autograder.sandbox import leftovers


def data_bytes() -> int:
    """What this process holds now (VmData), 0 where /proc does not say."""
    with contextlib.suppress(ValueError, IndexError):
        return int(leftovers.status(os.getpid()).get("VmData", "0 kB").split()[0]) << 10
    return 0


@contextlib.contextmanager
def bounded(limit: int) -> Iterator[int | None]:
    """This process's data limited to `limit` bytes (soft) while the block runs; the ceiling set (None: the process
    already held half of it, or more, and keeps its limits)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if data_bytes() * 2 > limit or (hard != resource.RLIM_INFINITY and hard < limit):
        yield None
        return
    resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
    try:
        yield limit
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def out_of_memory(error: BaseException) -> bool:
    """Whether `error` is an allocation the ceiling refused (Python's, NumPy's or torch's words for it)."""
    return isinstance(error, MemoryError) or (
        isinstance(error, RuntimeError) and "can't allocate memory" in str(error)[:500]
    )

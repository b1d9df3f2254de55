"""The floor: the same checks run directly in one process on the reference, no worker, no pytest.

Imports torch, calls every check of the rubric (threshold trainings included) with the
reference functions in process. `bench_grading.py` times this against `autograde grade`.
"""

import importlib
import time

from autograder import rubric
from autograder.locations import CHECKS
from autograder.student import InProcess, in_package


def main() -> None:
    started = time.monotonic()
    modules = [importlib.import_module(f"autograder.checks.{path.stem}") for path in CHECKS.glob("*.py")]
    student = InProcess(in_package("solutions"))
    for item in rubric.load().items:
        name = f"check_{item.function}_{item.aspect}"
        check = next(getattr(module, name) for module in modules if hasattr(module, name))
        check(student)
    print(f"floor: {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()

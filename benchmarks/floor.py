"""The floor: the same checks run directly in one process on the reference, no worker, no pytest.

Imports torch, calls every check of the rubric (threshold trainings included) with the
reference functions in process. `bench_grading.py` times this against `autograde grade`.
"""

import importlib
import time
from pathlib import Path

from autograder import rubric
from autograder.student import InProcess

CHECKS = Path(__file__).resolve().parent.parent / "autograder" / "checks"


def reference(dotted: str):
    module, *attributes = dotted.split(".")
    value = importlib.import_module(f"solutions.{module}")
    for attribute in attributes:
        value = getattr(value, attribute)
    return value


def main() -> None:
    started = time.monotonic()
    modules = [importlib.import_module(f"autograder.checks.{path.stem}") for path in CHECKS.glob("*.py")]
    student = InProcess(reference)
    for item in rubric.load().items:
        name = f"check_{item.function}_{item.aspect}"
        check = next(getattr(module, name) for module in modules if hasattr(module, name))
        check(student)
    print(f"floor: {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()

"""The floor: the same checks run directly in one process on the reference, no worker, no pytest.

Imports torch, calls every check of the rubric (threshold trainings included) with the
reference functions in process. `bench_grading.py` times this against `autograde grade`.
"""

import time

from autograder import rubric, todos
from autograder.student import InProcess, in_package


def main() -> None:
    started = time.monotonic()
    student = InProcess(in_package("solutions"))
    for item in rubric.load().items:
        todos.run_check(item.function, item.aspect, student)
    print(f"floor: {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()

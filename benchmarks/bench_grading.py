"""Grading speed, as ratios from one run on this machine.

    python benchmarks/bench_grading.py

(a) overhead: `autograde grade --reference` (worker process, pytest, reports) against the
    floor (`floor.py`: the same checks, threshold trainings included, run in one process).
    Target: at most 1.2x.
"""

import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def timed(command: list[str]) -> float:
    started = time.monotonic()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - started


def main() -> None:
    print(
        f"machine: {platform.machine()}, {platform.python_version()}, cores {len(__import__('os').sched_getaffinity(0))}"
    )
    with tempfile.TemporaryDirectory() as out:
        grading = timed([sys.executable, "-m", "autograder.cli", "grade", "--reference", "--out", out])
    floor = timed([sys.executable, str(HERE / "floor.py")])
    print(
        f"(a) one full grading of the reference: {grading:.1f} s; floor {floor:.1f} s; overhead {grading / floor:.2f}x"
    )


if __name__ == "__main__":
    main()

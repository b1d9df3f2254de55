"""Grading speed, as ratios from one run on this machine.

    python benchmarks/bench_grading.py

(a) overhead: `autograde grade --reference` (worker process, pytest, reports) against the
    floor (`floor.py`: the same checks, threshold trainings included, run in one process).
    Target: at most 1.2x.
(b) throughput: a roster of 20 submissions (8 correct, 6 with a catalogue mistake, 6 untouched
    stubs) graded by `autograde grade-all` with --jobs 1 and with --jobs 2. Target: at least 1.7x.
"""

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.roster import students

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MISTAKES = [
    "G1_last_column",
    "G3_plain_mean",
    "R2_previous_state_never_updated",
    "S2_previous_token",
    "T3_argmax",
    "C2_last_step_of_padding",
]


def roster(folder: Path) -> Path:
    """20 fork-like folders: correct, with one catalogue mistake, and untouched stubs."""
    for number in range(20):
        package = folder / f"student{number:02d}" / "exercises"
        source = ROOT / ("solutions" if number < 14 else "exercises")
        shutil.copytree(source, package, ignore=shutil.ignore_patterns("tests", "__pycache__"))
        if 8 <= number < 14:
            mistake = next((ROOT / "tests" / "corpus" / "mistakes").glob(f"{MISTAKES[number - 8]}*.py"))
            module = mistake.read_text().split("module: ")[1].split()[0]
            shutil.copyfile(mistake, package / f"{module}.py")
    return folder


def timed(command: list[str]) -> float:
    started = time.monotonic()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - started


def scores(results: Path) -> dict[str, float]:
    return {
        folder.name: json.loads((folder / "results.json").read_text())["score"]
        for folder in sorted(results.iterdir())
        if (folder / "results.json").exists()
    }


def grade_all(submissions: Path, out: Path, jobs: int) -> float:
    command = [sys.executable, "-m", "autograder.cli", "grade-all", str(submissions), "--out", str(out)]
    return timed([*command, "--jobs", str(jobs), "--force"])


def throughput(folder: Path) -> tuple[float, float, dict[str, float]]:
    """Grade the roster with one job, then with two; the scores must not depend on the jobs."""
    submissions = roster(folder / "roster")
    one = grade_all(submissions, folder / "jobs1", 1)
    two = grade_all(submissions, folder / "jobs2", 2)
    first, second = scores(folder / "jobs1"), scores(folder / "jobs2")
    if first != second or len(first) != len(students(submissions)):
        raise SystemExit(f"the scores differ between --jobs 1 and --jobs 2: {first} vs {second}")
    return one, two, first


def main() -> None:
    cores = len(os.sched_getaffinity(0))
    print(
        f"machine: {platform.machine()}, Python {platform.python_version()}, {cores} cores, {time.strftime('%Y-%m-%d')}"
    )
    with tempfile.TemporaryDirectory() as out:
        grading = timed([sys.executable, "-m", "autograder.cli", "grade", "--reference", "--out", out])
    floor = timed([sys.executable, str(HERE / "floor.py")])
    print(
        f"(a) one full grading of the reference: {grading:.1f} s; floor {floor:.1f} s; overhead {grading / floor:.2f}x",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="bench-roster-") as folder:
        one, two, marks = throughput(Path(folder))
    print(f"(b) 20 submissions, scores {sorted(marks.values(), reverse=True)}")
    print(f"    --jobs 1: {one:.1f} s; --jobs 2: {two:.1f} s; throughput {one / two:.2f}x")


if __name__ == "__main__":
    main()

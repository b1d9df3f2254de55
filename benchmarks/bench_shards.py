"""The roster workflow's shards against one job per student: set-up and grading, timed here.

    python benchmarks/bench_shards.py [--students 20] [--concurrency 20] [--shard-size 30]

Measured here, each from a fresh virtual environment (what a GitHub job starts from):
  shard:       one set-up (venv, torch==2.13.0, the grader), then `grade-all` over the 20
               submissions with --jobs = this machine's cores, as a shard job does;
  per student: for each of the 20, its own set-up, then `autograde grade` of that one submission,
               one after another, as 20 one-student jobs would each do on their own runner.
Estimated from those figures: runner-minutes per student (also as GitHub bills them, each job
rounded up to a whole minute) and wall time for rosters of 30, 300 and 1,000 students with
--concurrency jobs at a time (GitHub's limit depends on the plan: 20 on Free, 60 on Team), shard
jobs of --shard-size students (the workflow's default) whose grading time scales with their size.
The roster is bench_grading.py's: 8 correct, 6 with a catalogue mistake, 6 untouched stubs.
"""

import argparse
import math
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench_grading import roster, timed

from autograder.roster.grade_all import students
from autograder.roster.shards import SHARD_SIZE, Student, shards

ROOT = Path(__file__).resolve().parents[1]
ROSTERS = (30, 300, 1000)
MATRIX_LIMIT = 256  # jobs in one workflow run's matrix


def set_up(venv: Path) -> float:
    """A fresh virtual environment with CPU torch and the grader (not editable), as a job's set-up step."""
    started = time.monotonic()
    timed([sys.executable, "-m", "venv", str(venv)])
    timed([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "torch==2.13.0"])
    timed([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(ROOT)])
    return time.monotonic() - started


@dataclass
class Measured:
    shard_setup: float
    shard_grading: float
    setups: list[float]
    gradings: list[float]

    @property
    def shard_job(self) -> float:
        return self.shard_setup + self.shard_grading

    @property
    def student_jobs(self) -> list[float]:
        return [setup + grading for setup, grading in zip(self.setups, self.gradings, strict=True)]


def measure(submissions: list[Path], work: Path, cores: int, say) -> Measured:
    venv = work / "shard-venv"
    shard_setup = set_up(venv)
    say(f"shard: set-up {shard_setup:.1f} s")
    command = [str(venv / "bin" / "autograde"), "grade-all", str(submissions[0].parent), "--out", str(work / "shard")]
    shard_grading = timed([*command, "--jobs", str(cores), "--force"])
    say(f"shard: grade-all of {len(submissions)} with --jobs {cores}: {shard_grading:.1f} s")
    shutil.rmtree(venv)
    setups, gradings = [], []
    for number, submission in enumerate(submissions, 1):
        venv = work / f"venv-{number}"
        setups.append(set_up(venv))
        out = work / "one" / submission.name
        gradings.append(timed([str(venv / "bin" / "autograde"), "grade", str(submission), "--out", str(out)]))
        shutil.rmtree(venv)
        say(f"student {number}/{len(submissions)}: set-up {setups[-1]:.1f} s, grading {gradings[-1]:.1f} s")
    return Measured(shard_setup, shard_grading, setups, gradings)


def billed(seconds: float) -> int:
    """GitHub bills each job's time rounded up to a whole minute."""
    return math.ceil(seconds / 60)


def estimate(measured: Measured, count: int, shard_size: int, concurrency: int) -> dict:
    """Runner-minutes and wall time for a roster of `count`, both ways (a model of the measured jobs)."""
    per_submission = measured.shard_grading / len(measured.setups)
    sizes = [len(shard.students) for shard in shards([Student(f"o/s{n}") for n in range(count)], shard_size)]
    shard_jobs = [measured.shard_setup + per_submission * size for size in sizes]
    student_job = statistics.mean(measured.student_jobs)
    return {
        "shards": len(sizes),
        "shard minutes": sum(shard_jobs) / 60,
        "shard billed": sum(map(billed, shard_jobs)),
        "shard wall": math.ceil(len(sizes) / concurrency) * max(shard_jobs) / 60,
        "student minutes": count * student_job / 60,
        "student billed": count * billed(student_job),
        "student wall": math.ceil(count / concurrency) * student_job / 60,
        "student runs": math.ceil(count / MATRIX_LIMIT),
    }


def report(measured: Measured, count: int, shard_size: int, concurrency: int) -> str:
    mean_setup, mean_grading = statistics.mean(measured.setups), statistics.mean(measured.gradings)
    per_student_shard = measured.shard_job / count
    per_student_alone = statistics.mean(measured.student_jobs)
    billed_ratio = billed(per_student_alone) * count / billed(measured.shard_job)
    lines = [
        f"measured: shard of {count}: set-up {measured.shard_setup:.1f} s + grade-all {measured.shard_grading:.1f} s"
        f" = {measured.shard_job:.1f} s",
        f"measured: {count} one-student jobs: set-up {mean_setup:.1f} s (min {min(measured.setups):.1f},"
        f" max {max(measured.setups):.1f}) + grading {mean_grading:.1f} s = {per_student_alone:.1f} s each,"
        f" {sum(measured.student_jobs):.1f} s in all",
        f"runner time per student: shard {per_student_shard:.1f} s, one job each {per_student_alone:.1f} s:"
        f" {per_student_alone / per_student_shard:.1f}x less with shards",
        f"billed minutes per student: shard {billed(measured.shard_job) / count:.2f},"
        f" one job each {billed(per_student_alone)}: {billed_ratio:.1f}x",
        f"estimated, shards of {shard_size}, {concurrency} jobs at a time:",
        "| roster | shards | runner-minutes (billed) | wall | one job each: runner-minutes (billed) | wall | runs |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for size in ROSTERS:
        e = estimate(measured, size, shard_size, concurrency)
        shard = f"{e['shard minutes']:.0f} ({e['shard billed']}) | {e['shard wall']:.1f} min"
        alone = f"{e['student minutes']:.0f} ({e['student billed']}) | {e['student wall']:.1f} min"
        lines.append(f"| {size} | {e['shards']} | {shard} | {alone} | {e['student runs']} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=20, help="submissions in the shard (default 20)")
    parser.add_argument("--concurrency", type=int, default=20, help="jobs at a time (default 20: GitHub Free)")
    parser.add_argument("--shard-size", type=int, default=SHARD_SIZE, help=f"students per shard (default {SHARD_SIZE})")
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    load = " ".join(f"{value:.1f}" for value in os.getloadavg())
    machine = f"{platform.machine()}, {cores} cores, Python {platform.python_version()}"
    print(f"{time.strftime('%Y-%m-%d %H:%M')} · {machine}")
    print(f"load average at the start (1, 5, 15 min): {load}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-shards-") as folder:
        submissions = students(roster(Path(folder) / "roster"))[: args.students]
        for extra in students(Path(folder) / "roster")[args.students :]:
            shutil.rmtree(extra)
        measured = measure(submissions, Path(folder), cores, lambda line: print(f"  {line}", flush=True))
    print(f"load average at the end: {' '.join(f'{value:.1f}' for value in os.getloadavg())}")
    print(report(measured, len(submissions), args.shard_size, args.concurrency))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`autograde grade-all`: a whole roster on one machine, in parallel, resumable.

Each student's submission is graded by its own `autograde grade` process (so a
submission that crashes a grader takes down only its own), at most `jobs` at a
time, each with one worker and one torch thread per side. A grading whose inputs
(the submission's modules, the rubric, the grader version) are unchanged since
the last run is skipped. Ctrl-C stops the running gradings and keeps every
finished one.
"""

import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from autograder import __version__, reports
from autograder.grading import failed_grading, is_graded
from autograder.rubric import RUBRIC, load

KEY_FILE = "grading-key.txt"
SLACK = 120.0  # seconds beyond the rubric's grading cap before a grading process is killed


@dataclass
class Outcome:
    student: str
    status: str  # "graded", "skipped", "grader error"
    seconds: float = 0.0
    detail: str = ""


def students(submissions: Path) -> list[Path]:
    return sorted(path for path in submissions.iterdir() if path.is_dir() and not path.name.startswith("."))


def grading_key(submission: Path, only: list[str] | None = None) -> str:
    """What a grading depends on: the grader, the rubric, --only and the student's graded modules."""
    digest = hashlib.sha256(f"{__version__}\n{sorted(only or [])}\n".encode())
    digest.update(RUBRIC.read_bytes())
    for path in sorted((submission / "exercises").glob("*.py")):
        if is_graded(path):
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def up_to_date(submission: Path, out: Path, only: list[str] | None) -> bool:
    key = out / KEY_FILE
    current = grading_key(submission, only)
    return (out / "results.json").exists() and key.exists() and key.read_text().strip() == current


def _command(submission: Path, out: Path, only: list[str] | None) -> list[str]:
    command = [sys.executable, "-m", "autograder.cli", "grade", str(submission), "--out", str(out)]
    return command + (["--only", ",".join(only)] if only else [])


def _finish(submission: Path, out: Path, process: subprocess.Popen, started: float, only: list[str] | None) -> Outcome:
    seconds = time.monotonic() - started
    name = submission.name
    if process.returncode == 0 and (out / "results.json").exists():
        (out / KEY_FILE).write_text(grading_key(submission, only) + "\n")
        return Outcome(name, "graded", seconds)
    error = f"the grading process ended with status {process.returncode}"
    log = (out / "grader.log").read_text(errors="replace")[-2000:] if (out / "grader.log").exists() else ""
    if not (out / "results.json").exists() or process.returncode not in (0, 2):
        result = failed_grading(load().select(only), f"{error}; see grader.log", seconds)
        reports.write_results_json(result, out / "results.json")
        reports.write_summary_md(result, out / "summary.md")
    return Outcome(name, "grader error", seconds, (error + "\n" + log).strip())


Progress = Callable[[Outcome, int, int], None]


@dataclass
class _Running:
    process: subprocess.Popen
    started: float
    log: IO[bytes]


def _start(submission: Path, out: Path, only: list[str] | None) -> _Running:
    out.mkdir(parents=True, exist_ok=True)
    (out / KEY_FILE).unlink(missing_ok=True)  # until this grading finishes, nothing here is current
    log = (out / "grader.log").open("wb")
    process = subprocess.Popen(_command(submission, out, only), stdout=log, stderr=subprocess.STDOUT)
    return _Running(process, time.monotonic(), log)


def _stop_all(running: dict[Path, _Running]) -> None:
    """Ctrl-C: every running grading closes its worker on the way out; finished results stay."""
    for job in running.values():
        job.process.send_signal(signal.SIGINT)
    for job in running.values():
        try:
            job.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            job.process.kill()
        job.log.close()


def grade_all(
    submissions: Path,
    out: Path,
    jobs: int,
    force: bool = False,
    progress: Progress | None = None,
    only: list[str] | None = None,
) -> list[Outcome]:
    """Grade every subdirectory of `submissions` into `out/<student>/`, `jobs` at a time."""
    report = progress or (lambda *_: None)
    queue, outcomes = [], []
    for submission in students(submissions):
        if not force and up_to_date(submission, out / submission.name, only):
            outcomes.append(Outcome(submission.name, "skipped"))
        else:
            queue.append(submission)
    total = len(queue) + len(outcomes)
    for number, outcome in enumerate(outcomes, 1):
        report(outcome, number, total)
    limit = float(load().limits.get("grading_timeout", 600)) + SLACK
    running: dict[Path, _Running] = {}
    try:
        while queue or running:
            while queue and len(running) < jobs:
                submission = queue.pop(0)
                running[submission] = _start(submission, out / submission.name, only)
            time.sleep(0.2)
            for submission, job in list(running.items()):
                if job.process.poll() is None and time.monotonic() - job.started > limit:
                    job.process.kill()
                if job.process.poll() is None:
                    continue
                job.process.wait()
                job.log.close()
                del running[submission]
                outcomes.append(_finish(submission, out / submission.name, job.process, job.started, only))
                report(outcomes[-1], len(outcomes), total)
    except KeyboardInterrupt:
        _stop_all(running)
        raise
    return outcomes


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)

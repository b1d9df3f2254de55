"""Grading speed, as ratios from one run on this machine.

    python benchmarks/bench_grading.py             # all three, about half an hour on 2 cores
    python benchmarks/bench_grading.py --parts ab  # without nbgrader, about 10 minutes
    python benchmarks/bench_grading.py --parts d   # early stopping alone, about 3 minutes
    python benchmarks/bench_grading.py --parts e   # issue 34: now against today's way, about 12 minutes

(a) overhead: `autograde grade --reference` (worker process, pytest, reports) against the
    floor (`floor.py`: the same checks, threshold trainings included, run in one process).
    Target: at most 1.2x.
(b) throughput: a roster of 20 submissions (8 correct, 6 with a catalogue mistake, 6 untouched
    stubs) graded by `autograde grade-all` with --jobs 1 and with --jobs 2. Target: at least 1.7x.
(c) the same 20 submissions as notebooks (each student's modules in the answer cells of the
    released notebooks) graded by `nbgrader autograde` through the course of `autograde nbgrader`,
    against `autograde grade-all` with its default jobs; every item's score must match.
    Target: faster than nbgrader.
(d) early stopping (issue 34): the CPU (user + system of the grader, its worker and every process
    they waited for: getrusage of the children) of `autograde grade --reference` as graded, against
    the same grading with every threshold training run to its end (AUTOGRADE_FULL_TRAININGS=1 in the
    grader's environment), alternated over ROUNDS runs each; every item's score must match.
(e) issue 34 side by side: the grader as it is against "today's way", every training to its end,
    every worker started cold, the real torch._dynamo imported up front on both sides and the
    reference's scikit-learn answers computed in every grading (AUTOGRADE_FULL_TRAININGS=1,
    AUTOGRADE_COLD_WORKER=1, AUTOGRADE_REAL_DYNAMO=1, AUTOGRADE_NO_MEMO=1): the CPU of
    `autograde grade --reference` (ROUNDS each, alternated; target at most 0.5x) and the throughput of
    `grade-all` over the roster of (b) with its default jobs (target at least 1.6x); every item's score
    must match both ways. The grader's memo is filled first (`python -m autograder.checks.remember`, as
    Gradescope's setup.sh does; otherwise the first grading on a machine does it), and its CPU shown.
"""

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from autograder import rubric
from autograder.checks.memo import NO_MEMO
from autograder.checks.thresholds import FULL_LENGTH
from autograder.grading.grade import REAL_DYNAMO
from autograder.roster.grade_all import default_jobs, students
from autograder.sandbox.worker import COLD_WORKER

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
Scores = dict[str, dict[str, float]]  # student -> nbgrader cell id -> points


def roster(folder: Path) -> Path:
    """20 fork-like folders: correct, with one catalogue mistake, and untouched stubs."""
    for number in range(20):
        package = folder / f"student{number:02d}" / "exercises"
        source = ROOT / ("solutions" if number < 14 else "exercises")
        shutil.copytree(source, package, ignore=shutil.ignore_patterns("tests", "__pycache__"))
        if 8 <= number < 14:
            mistake = next((ROOT / "tests" / "corpus" / "mistakes").glob(f"{MISTAKES[number - 8]}*.py"))
            module = mistake.read_text().split("module: ")[1].split()[0]
            # a corpus mistake holds only what differs, to follow the reference module
            reference = (ROOT / "solutions" / f"{module}.py").read_text()
            (package / f"{module}.py").write_text(reference + "\n\n" + mistake.read_text())
    return folder


def timed(command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> float:
    """Seconds the command took; its output is shown only when it fails."""
    started = time.monotonic()
    finished = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env)
    if finished.returncode != 0:
        raise SystemExit(f"{' '.join(command[:4])} … failed ({finished.returncode}):\n{finished.stdout[-3000:]}")
    return time.monotonic() - started


# -- (a) ----------------------------------------------------------------------------------------
def overhead() -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as out:
        grading = timed([sys.executable, "-m", "autograder.cli", "grade", "--reference", "--out", out])
    return grading, timed([sys.executable, str(HERE / "floor.py")])


# -- (b) ----------------------------------------------------------------------------------------
def grade_all(submissions: Path, out: Path, jobs: int) -> float:
    command = [sys.executable, "-m", "autograder.cli", "grade-all", str(submissions), "--out", str(out)]
    return timed([*command, "--jobs", str(jobs), "--force"])


def grade_all_scores(results: Path) -> Scores:
    from autograder.release.nbgrader_course import grade_cell_id  # the nbgrader cell of each item, to compare with (c)

    ids = {item.name: grade_cell_id(item) for item in rubric.load().items}
    scores = {}
    for folder in sorted(path for path in results.iterdir() if (path / "results.json").exists()):
        tests = json.loads((folder / "results.json").read_text())["tests"]
        scores[folder.name] = {ids[test["name"]]: float(test["score"]) for test in tests}
    return scores


# -- (d) ----------------------------------------------------------------------------------------
ROUNDS = 3  # alternated rounds each way: this machine is shared, one pair is noisy


class Spent(NamedTuple):
    cpu: float  # user + system seconds of the command and every process it waited for
    wall: float


def spent(command: list[str], env: dict[str, str] | None = None) -> Spent:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = timed(command, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return Spent(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall)


def todays_way(full_length: bool, cold: bool) -> dict[str, str]:
    """The grader's environment: trainings to their end, and (`cold`) workers started cold that import the
    real torch._dynamo as the grader does and compute the reference's answers in each grading, or as the grader
    decides."""
    old = "1" if cold else "0"
    return {**os.environ, FULL_LENGTH: "1" if full_length else "0", COLD_WORKER: old, REAL_DYNAMO: old, NO_MEMO: old}


def reference_grading(out: Path, env: dict[str, str]) -> tuple[Spent, dict[str, float]]:
    """One `autograde grade --reference` in `env`; its items' scores."""
    used = spent([sys.executable, "-m", "autograder.cli", "grade", "--reference", "--out", str(out)], env)
    tests = json.loads((out / "results.json").read_text())["tests"]
    return used, {test["name"]: float(test["score"]) for test in tests}


def side_by_side(folder: Path, cold: bool) -> tuple[list[Spent], list[Spent], bool]:
    """ROUNDS gradings as graded and full-length (and cold, with `cold`), alternated; whether the scores matched."""
    now: list[Spent] = []
    then: list[Spent] = []
    scores = []
    for round_ in range(ROUNDS):
        for before, runs in ((False, now), (True, then)):
            used, items = reference_grading(folder / f"{round_}-{before}", todays_way(before, cold and before))
            runs.append(used)
            scores.append(items)
    return now, then, all(items == scores[0] for items in scores)


def ratios(now: list[Spent], then: list[Spent]) -> tuple[str, float, float]:
    """Each round's CPU both ways, and the CPU and wall ratios over all rounds."""
    shown = ", ".join(f"{a.cpu:.1f}/{b.cpu:.1f}" for a, b in zip(now, then, strict=True))
    cpu = sum(run.cpu for run in now) / sum(run.cpu for run in then)
    return shown, cpu, sum(run.wall for run in now) / sum(run.wall for run in then)


def roster_side_by_side(submissions: Path, folder: Path) -> tuple[Spent, Spent, bool]:
    """grade-all over the roster as it grades and today's way (default jobs); whether every item scored alike.
    Only the wall time counts here: the gradings run under grade-all's forkserver, which getrusage cannot see."""
    command = [sys.executable, "-m", "autograder.cli", "grade-all", str(submissions), "--force"]
    jobs = ["--jobs", str(default_jobs())]
    now = spent([*command, "--out", str(folder / "now"), *jobs], todays_way(False, False))
    then = spent([*command, "--out", str(folder / "then"), *jobs], todays_way(True, True))
    return now, then, grade_all_scores(folder / "now") == grade_all_scores(folder / "then")


def reference_both_ways(part: str, label: str, cold: bool) -> bool:
    """Print (d) or (e)'s reference gradings; whether every item scored alike."""
    remembered = spent([sys.executable, "-m", "autograder.checks.remember"])
    print(f"({part}) the memo filled first (once for an installation): {remembered.cpu:.1f} s of CPU", flush=True)
    with tempfile.TemporaryDirectory(prefix=f"bench-{part}-") as folder:
        now, then, same = side_by_side(Path(folder), cold)
    shown, cpu, wall = ratios(now, then)
    print(f"({part}) grade --reference CPU, {label}: {shown} s: {cpu:.2f}x (wall {wall:.2f}x)")
    print(f"    every item's score the same both ways: {same}", flush=True)
    return same


def roster_both_ways() -> bool:
    """Print (e)'s grade-all over the roster of (b) both ways; whether every item scored alike."""
    with tempfile.TemporaryDirectory(prefix="bench-e-roster-") as folder:
        submissions = roster(Path(folder) / "roster")
        now, then, same = roster_side_by_side(submissions, Path(folder))
    print(
        f"(e) grade-all, 20 submissions, --jobs {default_jobs()}: now {now.wall:.1f} s, "
        f"today's way {then.wall:.1f} s: throughput {then.wall / now.wall:.2f}x"
    )
    print(f"    every item's score the same both ways: {same}", flush=True)
    return same


# -- (c) ----------------------------------------------------------------------------------------
# (c) needs nbgrader (the dev extra); --parts ab runs without it.
def nbgrader(course: Path, *arguments: str) -> float:
    return timed([sys.executable, "-m", "nbgrader", *arguments], cwd=course)


def as_nbgrader_course(submissions: Path, course: Path) -> str:
    """The course of `autograde nbgrader`, released, with each student's modules submitted as notebooks.

    Returns the assignment's name.
    """
    import nbformat

    from autograder.release import nbgrader_course

    nbgrader_course.build_course(course)
    nbgrader(course, "generate_assignment", nbgrader_course.ASSIGNMENT, "--force")
    release = course / "release" / nbgrader_course.ASSIGNMENT
    for submission in students(submissions):
        target = course / "submitted" / submission.name / nbgrader_course.ASSIGNMENT
        target.mkdir(parents=True)
        for module in nbgrader_course.MODULES:
            released = nbformat.read(release / f"{module}.ipynb", as_version=4)
            filled = nbgrader_course.fill_answers(released, submission / "exercises" / f"{module}.py")
            nbformat.write(filled, target / f"{module}.ipynb")
    return nbgrader_course.ASSIGNMENT


def nbgrader_scores(course: Path) -> Scores:
    from nbgrader.api import Gradebook

    from autograder.release.nbgrader_course import ASSIGNMENT

    scores: Scores = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for student in gradebook.students:
            submission = gradebook.find_submission(ASSIGNMENT, student.id)
            grades = {grade.name: float(grade.score) for book in submission.notebooks for grade in book.grades}
            scores[student.id] = grades
    return scores


def differences(ours: Scores, theirs: Scores) -> list[str]:
    found = []
    for student in sorted(set(ours) | set(theirs)):
        mine, other = ours.get(student, {}), theirs.get(student, {})
        for cell in sorted(set(mine) | set(other)):
            if mine.get(cell) != other.get(cell):
                found.append(f"{student} {cell}: grade-all {mine.get(cell)}, nbgrader {other.get(cell)}")
    return found


# -- the run ------------------------------------------------------------------------------------
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default="abcd", help="which measures to run, of abcde (default: abcd)")
    parts = parser.parse_args().parts
    cores = len(os.sched_getaffinity(0))
    print(f"{time.strftime('%Y-%m-%d')} · {platform.machine()}, {cores} cores, Python {platform.python_version()}")
    if "a" in parts:
        grading, floor = overhead()
        print(f"(a) one full grading of the reference {grading:.1f} s; floor {floor:.1f} s: {grading / floor:.2f}x")
    if "d" in parts and not reference_both_ways("d", "early-stopped/full-length", cold=False):
        return 1
    if "e" in parts and not reference_both_ways("e", "now/today's way", cold=True):
        return 1
    if "e" in parts and not roster_both_ways():
        return 1
    if not {"b", "c"} & set(parts):
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-roster-") as folder:
        submissions = roster(Path(folder) / "roster")
        jobs = default_jobs()
        if "b" in parts:
            one = grade_all(submissions, Path(folder) / "jobs1", 1)
            print(f"(b) 20 submissions, grade-all --jobs 1: {one:.1f} s", flush=True)
        ours = grade_all(submissions, Path(folder) / f"jobs{jobs}", jobs)
        scores = grade_all_scores(Path(folder) / f"jobs{jobs}")
        totals = sorted((sum(items.values()) for items in scores.values()), reverse=True)
        print(f"    grade-all --jobs {jobs}: {ours:.1f} s; scores {[f'{total:g}' for total in totals]}")
        if "b" in parts:
            if grade_all_scores(Path(folder) / "jobs1") != scores:
                print("    the scores differ between --jobs 1 and --jobs 2")
                return 1
            print(f"    throughput --jobs {jobs} / --jobs 1: {one / ours:.2f}x", flush=True)
        if "c" in parts:
            course = Path(folder) / "course"
            assignment = as_nbgrader_course(submissions, course)
            theirs = nbgrader(course, "autograde", assignment, "--force")
            print(f"(c) nbgrader autograde, the same 20: {theirs:.1f} s; grade-all is {theirs / ours:.2f}x faster")
            mismatches = differences(scores, nbgrader_scores(course))
            print(f"    items scored differently: {len(mismatches)} of {sum(len(items) for items in scores.values())}")
            for line in mismatches:
                print(f"      {line}")
            return 1 if mismatches else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The student's side, as ratios from one run: `python -m exercises.check_training` and the workflow's install step.

    python benchmarks/bench_student.py --against 7b97af1             # check_training on the reference, here and at REV
    python benchmarks/bench_student.py --against 7b97af1 --verdicts  # and on the calibration's mistakes: same verdicts
    python benchmarks/bench_student.py --install                     # the student workflow's install, cold and warm

**check_training.** Each side's training check is built by its own `autograder` (the release's
`training_check`, REV's from a temporary git worktree) into a folder laid out as a student's
repository, with the reference's modules as the student's `exercises/`; `--verdicts` also appends, one
at a time, the corpus mistakes that bear on a threshold item (`MISTAKES`: those `autograde calibrate`
knows, as a student would write them) and runs both sides' check on each. It prints each side's wall
time and exit status, each item's verdict line, and fails when a verdict differs.

**The install step** (issue 49), simulated here with the student repository's lock: cold, a fresh venv
and `pip install --require-hashes --no-deps -r requirements.lock` with pip's download cache warm (a
first install fills it), so what is timed is the install, as on a push whose cache key is new; warm, the
cache's restore of that venv, timed as a copy of its folder (actions/cache unpacks a tarball of it).
"""

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
CORPUS = ROOT / "tests" / "corpus" / "mistakes"
# The calibration's known mistakes (calibrate.MISTAKES), as a student would write them: its two forwards
# written here (a SequenceClassifier whose forward reads the first step, or the mean of the embeddings),
# and from the corpus C2, S1 and S2; then three more of the corpus: C1 (its training run fails), C5 (off by
# one on the padded rows) and, passing every item, the reference itself (first).
GIVEN = (
    "\n\n_Given = SequenceClassifier\n\n\n"
    "class SequenceClassifier(_Given):\n    def forward(self, tokens, lengths=None):\n"
)
WRITTEN = {
    "first step": ("classifier", GIVEN + "        return self.head(self.rnn(self.embedding(tokens))[0][:, 0])\n"),
    "order-blind": (
        "classifier",
        GIVEN + "        return self.head(self.rnn(self.embedding(tokens).mean(dim=1, keepdim=True))[0][:, 0])\n",
    ),
}
CORPUS_MISTAKES = [
    "C2_last_step_of_padding.py",
    "S1_same_slice.py",
    "S2_previous_token.py",
    "C1_last_row.py",
    "C5_gather_final_of_lengths_minus_1.py",
]
MISTAKES = [*WRITTEN, *CORPUS_MISTAKES]
TARGET = 0.4  # issue 49: check_training's wall time at most 0.4x REV's
BUILD = (
    "import sys; from pathlib import Path; from autograder.release import student_repository as s; "
    "from autograder.rubric import load; out = Path(sys.argv[1]); "
    "[((out / p).parent.mkdir(parents=True, exist_ok=True), (out / p).write_bytes(make())) "
    "for p, make in s.training_check(load()).items()]"
)


def build_check(checkout: Path, student: Path) -> None:
    """The training check that `checkout`'s autograder ships, written into the student folder."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    subprocess.run([sys.executable, "-c", BUILD, str(student)], cwd=checkout, env=env, check=True)


def student_folder(folder: Path, checkout: Path, mistake: str | None) -> Path:
    """A student's repository: the reference's modules as `exercises/` (one corpus mistake appended to its
    module, as the corpus does) and `checkout`'s training check."""
    shutil.copytree(SOLUTIONS, folder / "exercises", ignore=shutil.ignore_patterns("__pycache__"))
    if mistake:
        module, text = WRITTEN.get(mistake) or _corpus(mistake)
        with (folder / "exercises" / f"{module}.py").open("a", encoding="utf-8") as target:
            target.write("\n\n" + text)
    build_check(checkout, folder)
    return folder


def _corpus(name: str) -> tuple[str, str]:
    """A corpus mistake: the module its header names, and its text (appended to the reference's module)."""
    text = (CORPUS / name).read_text(encoding="utf-8")
    return text.split("module:", 1)[1].split()[0], text


class Ran(NamedTuple):
    """One run of the check: its wall and CPU seconds, exit status and each item's verdict line."""

    seconds: float
    cpu: float
    status: int
    verdicts: list[str]


def check(folder: Path) -> Ran:
    """`python -m exercises.check_training` in the student folder, as the student runs it."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    started, cpu = time.monotonic(), children_cpu()
    done = subprocess.run(
        [sys.executable, "-m", "exercises.check_training"], cwd=folder, env=env, capture_output=True, text=True
    )
    seconds, cpu = time.monotonic() - started, children_cpu() - cpu
    verdicts = [line for line in done.stdout.splitlines() if line.endswith(VERDICTS) or "run failed" in line]
    if done.returncode not in (0, 1):
        print(done.stdout + done.stderr)
    return Ran(seconds, cpu, done.returncode, verdicts)


def children_cpu() -> float:
    """CPU seconds (user and system) of every process this one has waited for, so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


VERDICTS = ("reaches the threshold", "falls short")


def worktree(revision: str, folder: Path) -> Path:
    checkout = folder / "checkout"
    subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(checkout), revision], cwd=ROOT, check=True)
    return checkout


def side_by_side(revision: str, students: list[str | None]) -> bool:
    """Each student's check here and at the revision, alternated; True when every verdict is the same."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        then = worktree(revision, folder)
        try:
            return all(_one(folder, then, revision, student) for student in students)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(then)], cwd=ROOT, check=False)


def _one(folder: Path, then: Path, revision: str, student: str | None) -> bool:
    name = student or "the reference"
    before = check(student_folder(folder / f"{name}-then", then, student))
    after = check(student_folder(folder / f"{name}-now", ROOT, student))
    print(
        f"{name}: wall {after.seconds:.1f} s here, {before.seconds:.1f} s at {revision}: "
        f"{after.seconds / before.seconds:.2f}x; CPU {after.cpu:.1f} s, {before.cpu:.1f} s: "
        f"{after.cpu / before.cpu:.2f}x; exit {after.status}, {before.status}"
    )
    for line in after.verdicts:
        print(f"    {line}")
    same = (before.status, before.verdicts) == (after.status, after.verdicts)
    if not same:
        print(f"    VERDICTS DIFFER: at {revision} {before.verdicts}")
    return same


# -- the workflow's install step ---------------------------------------------------------------------------
def install(lock: Path, venv: Path) -> float:
    """Seconds to make a venv and install the lock into it, as the workflow's cold step does."""
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--require-hashes", "--no-deps"]
    subprocess.run([*pip, "-r", str(lock)], check=True)
    return time.monotonic() - started


def install_both_ways() -> None:
    """The install step cold (from the lock, pip's download cache warm) and warm (the cached venv restored)."""
    from autograder.release import student_repository

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        lock = folder / student_repository.STUDENT_LOCK
        lock.write_bytes(student_repository.student_lock())
        install(lock, folder / "warming")  # fills pip's download cache: the cold step below measures the install
        cold = install(lock, folder / "cold")
        started = time.monotonic()
        shutil.copytree(folder / "cold", folder / "restored", symlinks=True)
        warm = time.monotonic() - started
        works = subprocess.run([str(folder / "restored/bin/python"), "-c", "import torch, numpy, sklearn, pytest"])
    print(f"install step: cold {cold:.1f} s, warm (the venv restored) {warm:.1f} s: {warm / cold:.2f}x")
    print(f"    the restored venv imports torch, numpy, sklearn, pytest: {works.returncode == 0}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", metavar="REV", help="time check_training here and at REV (a git worktree)")
    parser.add_argument("--verdicts", action="store_true", help="also on the calibration's mistakes")
    parser.add_argument("--install", action="store_true", help="the workflow's install step, cold and warm")
    args = parser.parse_args()
    same = True
    if args.against:
        print(f"check_training's target: at most {TARGET}x of {args.against}'s wall time, the same verdicts")
        same = side_by_side(args.against, [None, *(MISTAKES if args.verdicts else [])])
    if args.install:
        install_both_ways()
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())

"""The modules a roster's shards graded, kept for `autograde similarity`, and matched to the gradings kept.

    python -m autograder.roster.modules keep SUBMISSIONS --results RESULTS --out MODULES
    python -m autograder.roster.modules pick RESULTS --from MODULES [MODULES ...] --out ROSTER

`keep` runs in a shard job right after the checkout, before any student code runs: for each student
checked out (SUBMISSIONS/<owner__name>; the last on-time commits of keep = "better" are left out), the
week's modules of their exercises/ go to MODULES/<owner__name>/exercises/, with the commit they are from
(`commit`, as RESULTS/<owner__name>/commit records it). Only the stubs' file names are looked up, read as
the grader reads a submission (regular files, no link followed) and each at most `[limits] similarity_kb`: every
path written is one the grader names, so no file name of a student reaches the artifact. A week's module
left out is named, with why, in MODULES/<owner__name>/left-out.
`pick` runs in the gradebook job after the merge: each student of RESULTS gets the modules of the first
MODULES folder whose `commit` is their kept grading's (a re-run's for the students it graded again, the
previous run's for the others), in ROSTER/<owner__name>/exercises/ as `autograde similarity` reads a
roster, with their `commit` (the gradebook job uploads ROSTER, for a later re-run's pick). A student none
matches is left out and named.
"""

import argparse
import shutil
import sys
from pathlib import Path

from autograder import rubric
from autograder.grading.submission import LeftOut, Module, Submission, SubmissionError, exercise_modules, modules
from autograder.roster.shard_job import ALSO_ON_TIME, students
from autograder.text import escaped

PACKAGE = "exercises"
LEFT_OUT = "left-out"  # a student's file: the week's modules not kept, and why


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace").strip() if path.is_file() else ""


def week_modules(folder: Path) -> tuple[list[Module], list[str]]:
    """The week's modules of a checkout's exercises/ (read as the grader reads them), and why any is left out."""
    week, kept, left_out = exercise_modules(), [], []
    bound = rubric.load().limits.similarity_kb  # the engine's own bound: what it would skip is not kept
    try:
        for read in modules(Submission(folder)):
            if isinstance(read, Module) and read.name in week and len(read.data) <= bound * 1024:
                kept.append(read)
            elif isinstance(read, Module) and read.name in week:
                left_out.append(f"{PACKAGE}/{read.name}: over the {bound} KB kept of a module")
            elif isinstance(read, LeftOut) and read.path.removeprefix(f"{PACKAGE}/") in week:
                left_out.append(f"{read.path}: {read.reason()}")
    except SubmissionError as error:
        left_out.append(escaped(str(error)))
    return kept, left_out


def keep(submissions: Path, results: Path, out: Path) -> int:
    """Copy each checked-out student's week modules into OUT; return how many students were kept."""
    count = 0
    for folder in students(submissions):
        commit = results / folder.name / "commit"
        if folder.name.endswith(ALSO_ON_TIME) or not commit.is_file():
            continue
        kept, left_out = week_modules(folder)
        target = out / folder.name
        (target / PACKAGE).mkdir(parents=True, exist_ok=True)
        for module in kept:
            (target / PACKAGE / module.name).write_bytes(module.data)
        shutil.copyfile(commit, target / "commit")
        if left_out:
            (target / LEFT_OUT).write_text("".join(line + "\n" for line in left_out), encoding="utf-8")
        count += 1
    return count


def pick(results: Path, sources: list[Path], out: Path) -> list[str]:
    """Each student's modules of the commit their kept grading graded, into OUT; return those none matched."""
    unmatched = []
    for folder in students(results):
        commit = _text(folder / "commit")
        found = next((s / folder.name for s in sources if commit and _text(s / folder.name / "commit") == commit), None)
        if found is None or not (found / PACKAGE).is_dir():
            unmatched.append(folder.name)
            continue
        shutil.copytree(found / PACKAGE, out / folder.name / PACKAGE, symlinks=True, dirs_exist_ok=True)
        shutil.copyfile(found / "commit", out / folder.name / "commit")  # what a later re-run's pick matches
    return unmatched


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m autograder.roster.modules", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    kept = commands.add_parser("keep", help="keep each checked-out student's week modules (a shard job)")
    kept.add_argument("submissions", type=Path)
    kept.add_argument("--results", type=Path, required=True)
    picked = commands.add_parser("pick", help="the modules of each student's kept grading (the gradebook job)")
    picked.add_argument("results", type=Path)
    picked.add_argument("--from", dest="sources", type=Path, nargs="+", required=True)
    for command in (kept, picked):
        command.add_argument("--out", type=Path, required=True)
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = _arguments(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.command == "keep":
        print(f"kept the week's modules of {keep(args.submissions, args.results, args.out)} students in {args.out}")
        return 0
    sources = [source for source in args.sources if source.is_dir()]
    unmatched = pick(args.results, sources, args.out)
    print(f"{len(students(args.out))} students' modules to compare in {args.out}")
    if unmatched:  # folder names the workflow made (owner__name): printable
        print(f"no modules kept for the grading of {len(unmatched)}: {' '.join(unmatched)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

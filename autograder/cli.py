"""The `autograde` command line: parse the arguments, hand off to `commands`."""

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from autograder import TITLE, commands


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _grade(args: argparse.Namespace) -> int:
    if args.reference:
        return commands.grade_reference(args.out, args.only, args.fail_under, args.require_isolation, args.rubric)
    return commands.grade_command(
        args.submission, args.out, args.only, args.fail_under, args.require_isolation, args.rubric
    )


def _require_isolation(parser: argparse.ArgumentParser, default: bool | None) -> None:
    """--require-isolation / --no-require-isolation (a grading that counts refuses to run unisolated)."""
    parser.add_argument(
        "--require-isolation",
        action=argparse.BooleanOptionalAction,
        default=default,
        help="refuse to grade (exit 2, the reason in results.json) where the student's code could read the "
        "instructor's files, reach the network or leave a process behind"
        + (" (default: required)" if default else " (default: not required)"),
    )


def _rubric(parser: argparse.ArgumentParser) -> None:
    """--rubric FILE: a course section's own rubric, in rubric.toml's format."""
    parser.add_argument(
        "--rubric",
        type=Path,
        metavar="FILE",
        help="the rubric to use, in rubric.toml's format: points, thresholds, limits, [late] and [credit] "
        "(default: the grader's own)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="autograde", description=f"{TITLE} autograder")
    subcommands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    grade = subcommands.add_parser("grade", help="grade one submission (a folder holding exercises/)")
    grade.add_argument("submission", nargs="?", type=Path, default=Path("."), help="the submission (default: .)")
    grade.add_argument("--out", type=Path, default=Path("grading"), help="where results.json and summary.md go")
    grade.add_argument("--only", type=_names, metavar="NAME[,NAME...]", help="grade only these functions or classes")
    grade.add_argument("--fail-under", type=float, metavar="N", help="exit 1 when the score is below N")
    grade.add_argument("--reference", action="store_true", help="grade the reference solutions (a demonstration)")
    _require_isolation(grade, None)
    _rubric(grade)
    grade.set_defaults(run=_grade)

    roster = subcommands.add_parser("grade-all", help="grade every submission in a folder, in parallel")
    roster.add_argument("submissions", type=Path, help="a folder with one subfolder per student")
    roster.add_argument("--out", type=Path, required=True, help="results go to OUT/<student>/")
    roster.add_argument("--jobs", type=int, help="gradings at once (default: the number of cores)")
    roster.add_argument("--force", action="store_true", help="regrade submissions that are unchanged")
    roster.add_argument("--only", type=_names, metavar="NAME[,NAME...]", help="grade only these functions or classes")
    roster.add_argument(
        "--time-budget",
        type=float,
        metavar="SECONDS",
        help="end within this time: a grading it cuts or never starts is recorded as not graded (exit 3)",
    )
    _require_isolation(roster, True)
    _rubric(roster)
    roster.set_defaults(
        run=lambda args: commands.grade_all_command(
            args.submissions,
            args.out,
            args.jobs,
            args.force,
            args.only,
            args.require_isolation,
            args.rubric,
            args.time_budget,
        )
    )

    calibrate = subcommands.add_parser("calibrate", help="show that every threshold separates right from wrong")
    calibrate.add_argument("--seeds", type=int, help="seeds per run (default: each item's calibration_seeds)")
    calibrate.set_defaults(run=lambda args: commands.calibrate_command(args.seeds))

    course = subcommands.add_parser("nbgrader", help="build the nbgrader course: config and source notebooks")
    course.add_argument("course", type=Path, metavar="COURSE_DIR", help="the course directory (created if missing)")
    course.add_argument("--assignment", default="week07", help="the assignment's name (default: week07)")
    course.set_defaults(run=lambda args: commands.nbgrader_command(args.course, args.assignment))

    stubs = subcommands.add_parser("stubs", help="write exercises/ from the solution markers of solutions/")
    stubs.add_argument("--check", action="store_true", help="only report whether exercises/ is up to date")
    stubs.set_defaults(run=lambda args: commands.stubs_command(args.check))

    release = subcommands.add_parser("release", help="write the student repository into DIR")
    release.add_argument("dir", type=Path, help="where the student repository goes")
    release.add_argument("--force", action="store_true", help="replace DIR's contents (its .git folder is kept)")
    release.add_argument("--classroom", action="store_true", help="its workflow reports to GitHub Classroom")
    release.set_defaults(run=lambda args: commands.release_command(args.dir, args.force, args.classroom))

    gradebook = subcommands.add_parser("gradebook", help="merge a roster's gradings into a CSV and an overview")
    gradebook.add_argument("results", type=Path, help="one subfolder per student, each with results.json")
    gradebook.add_argument("--out", type=Path, default=Path("gradebook"), help="where gradebook.csv goes")
    gradebook.add_argument("--roster", type=Path, help="list every roster repository, even without results")
    _rubric(gradebook)
    gradebook.set_defaults(
        run=lambda args: commands.gradebook_command(args.results, args.out, args.roster, args.rubric)
    )

    report = subcommands.add_parser("report", help="write the class report: what the class got wrong, one HTML page")
    report.add_argument("results", type=Path, help="one subfolder per student, each with results.json")
    report.add_argument("--out", type=Path, required=True, help="where report.html and misconceptions.md go")
    report.add_argument("--roster", type=Path, help="list every roster repository, even without results")
    report.add_argument("--only", type=_names, metavar="NAME[,NAME...]", help="the functions that were graded")
    _rubric(report)
    report.set_defaults(
        run=lambda args: commands.report_command(args.results, args.out, args.roster, args.only, True, args.rubric)
    )

    merge = subcommands.add_parser("merge", help="merge folders of gradings, keeping each student's newest")
    merge.add_argument("sources", type=Path, nargs="+", metavar="SOURCE", help="folders of gradings, older first")
    merge.add_argument("--out", type=Path, required=True, help="a new folder: one subfolder per student")
    merge.add_argument("--roster", type=Path, help="the roster file: name its students that no source holds")
    merge.set_defaults(run=lambda args: commands.merge_command(args.sources, args.out, args.roster))

    gradescope = subcommands.add_parser("gradescope", help="write the Gradescope autograder bundle (a zip)")
    gradescope.add_argument("out", type=Path, help="the zip to write, e.g. autograder.zip")
    gradescope.set_defaults(run=lambda args: commands.gradescope_command(args.out))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())

"""The `autograde` command line: parse the arguments, hand off to `commands`."""

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from autograder import commands


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _grade(args: argparse.Namespace) -> int:
    if args.reference:
        return commands.grade_reference(args.out, args.only, args.fail_under)
    return commands.grade_command(args.submission, args.out, args.only, args.fail_under)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="autograde", description="Week 07 · Recurrent Networks autograder")
    subcommands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    grade = subcommands.add_parser("grade", help="grade one submission (a folder holding exercises/)")
    grade.add_argument("submission", nargs="?", type=Path, default=Path("."), help="the submission (default: .)")
    grade.add_argument("--out", type=Path, default=Path("grading"), help="where results.json and summary.md go")
    grade.add_argument("--only", type=_names, metavar="NAME[,NAME...]", help="grade only these functions or classes")
    grade.add_argument("--fail-under", type=float, metavar="N", help="exit 1 when the score is below N")
    grade.add_argument("--reference", action="store_true", help="grade the reference solutions (a demonstration)")
    grade.set_defaults(run=_grade)

    calibrate = subcommands.add_parser("calibrate", help="show that every threshold separates right from wrong")
    calibrate.add_argument("--seeds", type=int, help="seeds per run (default: each item's calibration_seeds)")
    calibrate.set_defaults(run=lambda args: commands.calibrate_command(args.seeds))

    stubs = subcommands.add_parser("stubs", help="write exercises/ from the solution markers of solutions/")
    stubs.add_argument("--check", action="store_true", help="only report whether exercises/ is up to date")
    stubs.set_defaults(run=lambda args: commands.stubs_command(args.check))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())

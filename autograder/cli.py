"""The `autograde` command line: parse the arguments, hand off to one function each."""

import argparse
import sys
from collections.abc import Sequence


def _stubs(args: argparse.Namespace) -> int:
    from autograder import stubs

    if args.check:
        problems = stubs.differences()
        for problem in problems:
            print(f"exercises/{problem}", file=sys.stderr)
        if problems:
            print("exercises/ is out of date: run `autograde stubs`", file=sys.stderr)
        return 1 if problems else 0
    changed = stubs.write_exercises()
    print(f"exercises/: {len(changed)} file(s) written" + (f" ({', '.join(changed)})" if changed else ""))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="autograde", description="Week 07 · Recurrent Networks autograder")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    stubs = commands.add_parser("stubs", help="write exercises/ from the solution markers of solutions/")
    stubs.add_argument("--check", action="store_true", help="only report whether exercises/ is up to date")
    stubs.set_defaults(run=_stubs)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())

"""The `autograde` command line: parse the arguments, hand off to `commands`.

The same thing has the same name in every command's help: FORK a student's submission (a folder
holding exercises/), ROSTER a folder of submissions (one subfolder per student), RESULTS a folder of
gradings (one subfolder per student, each with results.json), OUT where a command writes, RUBRIC a
rubric file, LIST a roster file (a student a line: their folder's name, or their repository as owner/name), DIR
a folder of code students may have copied (similarity --known). A path the command reads that does not exist
is refused before anything is done, and so is a folder that is not what the command reads (a fork given for a
roster, a roster for a fork, an empty roster, a roster file that misnames its folders).
"""

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from autograder import TITLE, __version__, commands, stubs, todos
from autograder.commands import EXIT_BELOW, EXIT_ERROR, EXIT_NOT_GRADED, EXIT_OK

REFUSED = f"{EXIT_ERROR}  nothing done: a bad argument or rubric, or a path that does not exist"
EXITS = {  # each command's exit statuses, as its --help lists them (the statuses commands.py returns)
    "grade": [
        f"{EXIT_OK}  graded, whatever the score: results.json and summary.md written",
        f"{EXIT_BELOW}  graded, and the score is below --fail-under",
        f"{EXIT_ERROR}  not graded: no exercises/ folder, isolation required but missing, ... (results.json\n"
        "   says why); or nothing done: a bad argument or rubric, a FORK that does not exist or is a roster",
    ],
    "grade-all": [
        f"{EXIT_OK}  the roster graded, its gradebook and report written",
        f"{EXIT_ERROR}  no grading started: a bad argument or rubric, a ROSTER that does not exist, is empty\n"
        "   or is one fork (nothing written), or isolation required but missing (each student's results.json\n"
        "   says why)",
        f"{EXIT_NOT_GRADED}  a student not graded for a reason not theirs (a grader error, a crash, --time-budget),\n"
        "   after one more try: named on stderr, in their results.json and the gradebook as not graded",
        "130  interrupted: the finished gradings are kept; the same command goes on",
    ],
    "calibrate": [
        f"{EXIT_OK}  every threshold separates the reference from the known mistakes, and early stopping\n"
        "   changes no item's verdict",
        f"{EXIT_BELOW}  a threshold no longer does, or a verdict differs from full-length training",
        f"{EXIT_ERROR}  nothing trained: a bad argument or --rubric",
    ],
    "stubs": [f"{EXIT_OK}  exercises/ written, or (--check) up to date", f"{EXIT_BELOW}  (--check) out of date"],
    "release": [
        f"{EXIT_OK}  written",
        f"{EXIT_ERROR}  nothing written: a bad --rubric, or OUT is a file, or is not empty (see --force)",
    ],
    "rubric check": [
        f"{EXIT_OK}  the rubric can be used: one line with its items, points and thresholds, then its policies",
        f"{EXIT_ERROR}  it cannot: one line saying where and what is wrong",
    ],
    "todo check": [
        f"{EXIT_OK}  every exercise asked about is complete: a line per requirement, each ok or a note",
        f"{EXIT_BELOW}  something is missing: its line says what, and what to do",
        f"{EXIT_ERROR}  nothing checked: a KEY the week has no exercise for",
    ],
    "report": [f"{EXIT_OK}  written", REFUSED + ", or the report extra is not installed"],
    "nbgrader": [
        f"{EXIT_OK}  written",
        f"{EXIT_ERROR}  nothing written: a bad --rubric, or the nbgrader extra is not installed",
    ],
    "similarity": [
        f"{EXIT_OK}  written (whatever it found: nothing here changes a grade; a module that could not be read\n"
        "   is named on stderr and left out of that student's comparison)",
        REFUSED,
    ],
}
DEFAULT_EXITS = [f"{EXIT_OK}  done", REFUSED]
SUMMARY_EXITS = [
    f"{EXIT_OK}  done (grade: whatever the score)",
    f"{EXIT_BELOW}  done, and the work falls short: a score below --fail-under (grade), a threshold that\n"
    "   no longer separates or early stopping changes a verdict (calibrate), exercises/ out of date (stubs --check)",
    f"{EXIT_ERROR}  not done: a bad argument or rubric, a path that does not exist, a grading that could\n"
    "   not run (its results.json says why)",
    f"{EXIT_NOT_GRADED}  grade-all: a student not graded for a reason not theirs (named on stderr)",
    "130  grade-all interrupted (the finished gradings are kept)",
    "each command's --help lists its own",
]


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Help with every option's default shown (unless its help says it), the epilog's lines kept as written."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        shown = action.default not in (None, False, argparse.SUPPRESS) and "(default" not in text
        return f"{text} (default: %(default)s)" if shown else text


def _epilog(lines: list[str]) -> str:
    """The exit statuses, a line each (a continuation line indented under its text)."""
    return "exit status:\n" + "\n".join("  " + line.replace("\n", "\n  ") for line in lines)


def _command(
    subcommands: argparse._SubParsersAction, name: str, summary: str, group: str = ""
) -> argparse.ArgumentParser:
    """A subcommand whose one-line summary is both its entry in the list and its --help's description (`group`:
    the command it belongs to, as `rubric` for `rubric check`)."""
    parser = subcommands.add_parser(
        name,
        help=summary,
        description=summary,
        epilog=_epilog(EXITS.get(f"{group} {name}".strip(), DEFAULT_EXITS)),
        formatter_class=_Formatter,
    )
    parser.set_defaults(existing=[])
    return parser


def every_command(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, argparse.ArgumentParser]:
    """Every command that runs, by its name after `autograde` ('grade', 'rubric check'), in --help's order."""
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                inner = every_command(command, f"{prefix}{name} ")
                found.update(inner or {f"{prefix}{name}": command})
    return found


def _existing(parser: argparse.ArgumentParser, name: str, metavar: str, **options: object) -> None:
    """A path argument that must exist: `autograde` refuses it, exit 2 and nothing done, when it does not."""
    parser.add_argument(name, type=Path, metavar=metavar, **options)
    parser.get_default("existing").append((name.lstrip("-").replace("-", "_"), metavar))


def _missing(args: argparse.Namespace) -> str | None:
    """'FORK does not exist: PATH' for the first path argument that does not exist; None when all do."""
    for name, metavar in args.existing:
        paths = getattr(args, name)
        for path in paths if isinstance(paths, list) else [paths]:
            if path is not None and not path.exists():
                return f"{metavar} does not exist: {path}"
    return None


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _grade(args: argparse.Namespace) -> int:
    if args.reference:
        return commands.grade_reference(args.out, args.only, args.fail_under, args.require_isolation, args.rubric)
    return commands.grade_fork_command(
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


RECORDED = "the one the gradings record (results.json), else the grader's own; another than theirs is refused"


def _rubric(parser: argparse.ArgumentParser, default: str = "the grader's own") -> None:
    """--rubric RUBRIC: a course section's own rubric, in rubric.toml's format."""
    parser.add_argument(
        "--rubric",
        type=Path,
        metavar="RUBRIC",
        help="the rubric to use, in rubric.toml's format: points, thresholds, limits, [late] and [credit] "
        f"(default: {default})",
    )


def _only(parser: argparse.ArgumentParser, help: str = "grade only these functions or classes") -> None:
    parser.add_argument("--only", type=_names, metavar="NAME[,NAME...]", help=help)


def _roster_list(parser: argparse.ArgumentParser, help: str = "list each student, even without results") -> None:
    """--roster LIST: the roster file, whose students are each listed (or named) even without results."""
    _existing(
        parser,
        "--roster",
        "LIST",
        help=f"the roster file, a student a line (their folder's name, or their repository owner/name): {help}",
    )


def _add_grade(subcommands: argparse._SubParsersAction) -> None:
    grade = _command(subcommands, "grade", "grade one student's fork: results.json, summary.md and a table")
    _existing(grade, "submission", "FORK", nargs="?", default=Path("."), help="a folder holding exercises/")
    grade.add_argument("--out", type=Path, default=Path("grading"), help="where results.json and summary.md go")
    _only(grade)
    grade.add_argument("--fail-under", type=float, metavar="SCORE", help="exit 1 when the score is below SCORE")
    grade.add_argument("--reference", action="store_true", help="grade the reference solutions instead of FORK")
    _require_isolation(grade, None)
    _rubric(grade)
    grade.set_defaults(run=_grade)


def _add_grade_all(subcommands: argparse._SubParsersAction) -> None:
    roster = _command(subcommands, "grade-all", "grade every fork of a roster folder, in parallel, then its gradebook")
    _existing(roster, "submissions", "ROSTER", help="a folder with one fork per student")
    roster.add_argument("--out", type=Path, required=True, help="the gradings go to OUT/<student>/")
    roster.add_argument("--jobs", type=int, metavar="N", help="gradings at once (default: the number of cores)")
    roster.add_argument("--force", action="store_true", help="regrade forks that are unchanged")
    _only(roster)
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


def _add_rubric(subcommands: argparse._SubParsersAction) -> None:
    """`autograde rubric check [RUBRIC]`: what `python -m autograder.rubric` does, as a command."""
    group = _command(subcommands, "rubric", "the rubric's own commands: `autograde rubric check` checks a rubric file")
    inner = group.add_subparsers(dest="rubric_command", required=True, metavar="COMMAND")
    summary = "check a rubric file and say what it sets: points, thresholds and policies"
    check = _command(inner, "check", summary, group="rubric")
    _existing(check, "file", "RUBRIC", nargs="?", help="a rubric in rubric.toml's format (default: the grader's own)")
    check.set_defaults(run=lambda args: commands.rubric_check_command(args.file))


def _add_todo(subcommands: argparse._SubParsersAction) -> None:
    """`autograde todo check [KEY ...]`: whether an exercise is complete (docs/maintaining.md, "Add or change a
    TODO")."""
    group = _command(subcommands, "todo", "the exercises' own commands: `autograde todo check` says what one lacks")
    inner = group.add_subparsers(dest="todo_command", required=True, metavar="COMMAND")
    summary = "say whether each exercise is complete, a line per requirement, and what to do for each one missing"
    check = _command(inner, "check", summary, group="todo")
    check.add_argument(
        "keys",
        nargs="*",
        metavar="KEY",
        help="an exercise: its folder's name in autograder/todos/, as lstm_step (default: every exercise)",
    )
    check.set_defaults(run=lambda args: commands.todo_check_command(args.keys))


def _add_course_files(subcommands: argparse._SubParsersAction) -> None:
    """The commands that write the course's own files: calibration, stubs, release, nbgrader, Gradescope."""
    calibrate = _command(subcommands, "calibrate", "show that every threshold separates right from wrong")
    calibrate.add_argument(
        "--seeds", type=int, metavar="N", help="seeds per run (default: each item's calibration_seeds)"
    )
    _rubric(calibrate)
    calibrate.add_argument(
        "--list", action="store_true", help="train nothing: list each threshold item and the threshold it checks"
    )
    calibrate.set_defaults(run=lambda args: commands.calibrate_command(args.seeds, args.rubric, args.list))

    stubs = _command(subcommands, "stubs", "write exercises/ from the solution markers of solutions/")
    stubs.add_argument("--check", action="store_true", help="write nothing: say whether exercises/ is up to date")
    stubs.set_defaults(run=lambda args: commands.stubs_command(args.check))

    release = _command(subcommands, "release", "write the student repository into OUT")
    release.add_argument("dir", type=Path, metavar="OUT", help="the folder the student repository goes to")
    release.add_argument("--force", action="store_true", help="replace OUT's contents (its .git folder is kept)")
    release.add_argument("--classroom", action="store_true", help="its workflow reports to GitHub Classroom")
    release.add_argument(
        "--no-cache",
        dest="cache",
        action="store_false",
        help="record every public test module over the known mistakes again, and keep nothing (default: a module "
        "whose recording's inputs have not changed is read from the cache, $AUTOGRADE_RELEASE_CACHE or "
        "~/.cache/autograder-release)",
    )
    _rubric(release)
    release.set_defaults(
        run=lambda args: commands.release_command(args.dir, args.force, args.classroom, args.rubric, args.cache)
    )

    course = _command(subcommands, "nbgrader", "write the nbgrader course into OUT: its config and source notebooks")
    course.add_argument("course", type=Path, metavar="OUT", help="the course folder (created if missing)")
    course.add_argument("--assignment", default="week07", metavar="NAME", help="the assignment's name")
    _rubric(course)
    course.set_defaults(run=lambda args: commands.nbgrader_command(args.course, args.assignment, args.rubric))

    gradescope = _command(subcommands, "gradescope", "write the Gradescope autograder bundle (a zip)")
    gradescope.add_argument("out", type=Path, metavar="ZIP", help="the zip to write, e.g. autograder.zip")
    _rubric(gradescope)
    gradescope.set_defaults(run=lambda args: commands.gradescope_command(args.out, args.rubric))


def _add_after_grading(subcommands: argparse._SubParsersAction) -> None:
    """The commands that read a roster's gradings: gradebook, report, merge."""
    gradebook = _command(subcommands, "gradebook", "merge a roster's gradings into a CSV and an overview")
    _existing(gradebook, "results", "RESULTS", help="one subfolder per student, each with results.json")
    gradebook.add_argument("--out", type=Path, default=Path("gradebook"), help="where gradebook.csv goes")
    _roster_list(gradebook)
    _rubric(gradebook, RECORDED)
    gradebook.set_defaults(
        run=lambda args: commands.gradebook_command(args.results, args.out, args.roster, args.rubric)
    )

    report = _command(subcommands, "report", "write the class report: what the class got wrong, one HTML page")
    _existing(report, "results", "RESULTS", help="one subfolder per student, each with results.json")
    report.add_argument("--out", type=Path, required=True, help="where report.html and misconceptions.md go")
    _roster_list(report)
    _only(report, "the functions that were graded")
    _rubric(report, RECORDED)
    report.set_defaults(
        run=lambda args: commands.report_command(args.results, args.out, args.roster, args.only, True, args.rubric)
    )

    merge = _command(subcommands, "merge", "merge folders of gradings, keeping each student's newest")
    _existing(merge, "sources", "RESULTS", nargs="+", help="folders of gradings, older first")
    merge.add_argument("--out", type=Path, required=True, help="a new folder: one subfolder per student")
    _roster_list(merge, "name each that no source holds")
    merge.set_defaults(run=lambda args: commands.merge_command(args.sources, args.out, args.roster))

    similarity = _command(
        subcommands, "similarity", "compare what the students wrote in each TODO: the pairs to look at, one page"
    )
    _existing(similarity, "submissions", "ROSTER", help="a folder with one fork per student")
    similarity.add_argument(
        "--out", type=Path, required=True, help="where similarity.json, similarity.csv and similarity.html go"
    )
    _existing(
        similarity,
        "--known",
        "DIR",
        action="append",
        default=[],
        help="code students may have copied, labelled by the folder's name: one submission (exercises/ or the "
        "week's modules) or a folder of them (last year's roster); repeatable "
        "(default: the reference solutions only, which are always one)",
    )
    similarity.set_defaults(run=lambda args: commands.similarity_command(args.submissions, args.out, args.known))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="autograde",
        description=f"{TITLE} autograder",
        epilog=_epilog(SUMMARY_EXITS),
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subcommands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_grade(subcommands)
    _add_grade_all(subcommands)
    _add_after_grading(subcommands)
    _add_course_files(subcommands)
    _add_rubric(subcommands)
    _add_todo(subcommands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    missing = None if getattr(args, "reference", False) else _missing(args)
    if missing:
        return commands.fail(missing)
    try:
        return args.run(args)
    except (todos.RecordError, stubs.MarkerError) as error:  # the week's own files, mid-edit: say which and what
        return commands.fail(error)


if __name__ == "__main__":
    sys.exit(main())

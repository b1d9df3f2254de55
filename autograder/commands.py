"""What each `autograde` command does, as functions the CLI hands off to."""

import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

from autograder import reports, rubric, stubs
from autograder.grading import GradingError, failed_grading, grade

EXIT_OK, EXIT_BELOW, EXIT_ERROR = 0, 1, 2


def grade_command(submission: Path, out: Path, only: list[str] | None, fail_under: float | None) -> int:
    """Grade, write results.json and summary.md (always), print the table, choose the exit status."""
    try:
        selected = rubric.load().select(only)
    except ValueError as error:
        print(f"autograde: {error}", file=sys.stderr)
        return EXIT_ERROR
    started = time.monotonic()
    status = EXIT_OK
    try:
        result = grade(submission, selected)
    except GradingError as error:
        result, status = failed_grading(selected, str(error), time.monotonic() - started), EXIT_ERROR
        print(f"autograde: {error}", file=sys.stderr)
    except Exception as error:  # a grader bug must still leave a results.json behind
        message = f"the grader failed unexpectedly ({type(error).__name__}: {error})"
        result, status = failed_grading(selected, message, time.monotonic() - started), EXIT_ERROR
        traceback.print_exc()
    out.mkdir(parents=True, exist_ok=True)
    reports.write_results_json(result, out / "results.json")
    reports.write_summary_md(result, out / "summary.md")
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as summary:
            summary.write(reports.markdown(result))
    print(reports.table(result))
    print(f"\nwrote {out / 'results.json'} and {out / 'summary.md'} ({result.execution_time:.1f} s)")
    if status == EXIT_OK and fail_under is not None and result.score < fail_under:
        print(f"score {result.score:g} is below --fail-under {fail_under:g}", file=sys.stderr)
        return EXIT_BELOW
    return status


def grade_reference(out: Path, only: list[str] | None, fail_under: float | None) -> int:
    """Grade the reference solutions as if they were a student's fork (a demonstration)."""
    with tempfile.TemporaryDirectory(prefix="autograde-reference-") as folder:
        (Path(folder) / "exercises").mkdir()
        for path in stubs.SOLUTIONS.glob("*.py"):
            shutil.copyfile(path, Path(folder) / "exercises" / path.name)
        return grade_command(Path(folder), out, only, fail_under)


def calibrate_command(seeds: int | None) -> int:
    """Print the calibration table; exit 1 when a threshold no longer separates right from wrong."""
    from autograder import calibrate

    rows = calibrate.calibrate(seeds, progress=lambda line: print(f"  {line}", file=sys.stderr, flush=True))
    print(calibrate.table(rows))
    return EXIT_OK if all(row.holds for row in rows) else EXIT_BELOW


def stubs_command(check: bool) -> int:
    if check:
        problems = stubs.differences()
        for problem in problems:
            print(f"exercises/{problem}", file=sys.stderr)
        if problems:
            print("exercises/ is out of date: run `autograde stubs`", file=sys.stderr)
        return EXIT_BELOW if problems else EXIT_OK
    changed = stubs.write_exercises()
    print(f"exercises/: {len(changed)} file(s) written" + (f" ({', '.join(changed)})" if changed else ""))
    return EXIT_OK

"""What each `autograde` command does, as functions the CLI hands off to."""

import os
import shutil
import sys
import tempfile
import time
import traceback
from functools import partial
from pathlib import Path

from autograder import reports, rubric, sandbox, stubs
from autograder.grading import GradingError, failed_grading, grade, opted_out, run_environment

EXIT_OK, EXIT_BELOW, EXIT_ERROR = 0, 1, 2


def grade_command(
    submission: Path,
    out: Path,
    only: list[str] | None,
    fail_under: float | None,
    require_isolation: bool | None = None,
) -> int:
    """Grade, write results.json and summary.md (always), print the table, choose the exit status.

    `require_isolation`: see `grading.grade`; a refusal exits 2 with the reason in results.json.
    """
    try:
        selected = rubric.load().select(only)
    except ValueError as error:
        print(f"autograde: {error}", file=sys.stderr)
        return EXIT_ERROR
    started = time.monotonic()
    status = EXIT_OK
    try:
        if require_isolation is False:  # an explicit opt-out comes first, on the terminal as in every report
            print(opted_out(sandbox.available()), file=sys.stderr)
        print_isolation(sandbox.available())  # inside: a probe that fails still leaves a results.json
        result = grade(submission, selected, require_isolation)
    except GradingError as error:
        environment = run_environment(sandbox.available(), require_isolation)
        result, status = failed_grading(selected, str(error), time.monotonic() - started, environment), EXIT_ERROR
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


def grade_one(submission: Path, out: Path, only: list[str] | None, require_isolation: bool = True) -> int:
    """What `grade-all` runs for each student: `autograde grade SUBMISSION --out OUT [--only ...]`, isolation
    required unless `require_isolation` is False (grade-all passes it in a functools.partial)."""
    return grade_command(submission, out, only, None, require_isolation)


def print_isolation(isolation: sandbox.Isolation) -> None:
    """The worker's isolation on the terminal: the layers in force, and any that failed to start."""
    print(f"isolation: {', '.join(isolation.in_force()) or 'interpreter-level only'}", file=sys.stderr)
    for failure in isolation.failures:
        print(f"isolation: failed to start: {failure}", file=sys.stderr)


def grade_reference(
    out: Path, only: list[str] | None, fail_under: float | None, require_isolation: bool | None = None
) -> int:
    """Grade the reference solutions as if they were a student's fork (a demonstration)."""
    with tempfile.TemporaryDirectory(prefix="autograde-reference-") as folder:
        (Path(folder) / "exercises").mkdir()
        for path in stubs.SOLUTIONS.glob("*.py"):
            shutil.copyfile(path, Path(folder) / "exercises" / path.name)
        return grade_command(Path(folder), out, only, fail_under, require_isolation)


def calibrate_command(seeds: int | None) -> int:
    """Print the calibration table; exit 1 when a threshold no longer separates right from wrong."""
    from autograder import calibrate

    rows = calibrate.calibrate(seeds, progress=lambda line: print(f"  {line}", file=sys.stderr, flush=True))
    print(calibrate.table(rows))
    return EXIT_OK if all(row.holds for row in rows) else EXIT_BELOW


def grade_all_command(
    submissions: Path,
    out: Path,
    jobs: int | None,
    force: bool,
    only: list[str] | None,
    require_isolation: bool = True,
) -> int:
    """Grade a roster folder in parallel; write each student's results, then the gradebook.

    Isolation is required unless `require_isolation` is False: where it is missing, no grading
    starts, each student's results.json gives the reason, and the exit status is 2.
    """
    from autograder import roster
    from autograder.progress import ProgressReport

    if not submissions.is_dir():
        print(f"autograde: {submissions} is not a folder of submissions", file=sys.stderr)
        return EXIT_ERROR
    jobs = jobs or roster.default_jobs()
    out.mkdir(parents=True, exist_ok=True)  # an empty roster still gets its (empty) gradebook and report
    try:
        selected = rubric.load().select(only)  # an unknown name stops here, before any grading
        isolation = sandbox.available()
        print_isolation(isolation)
        if require_isolation and isolation.refusal():
            return refuse_roster(submissions, out, selected, isolation)
        grade = partial(grade_one, require_isolation=require_isolation)
        outcomes = roster.grade_all(submissions, out, jobs, grade, force, ProgressReport(), only)
    except ValueError as error:
        print(f"autograde: {error}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("\ninterrupted: finished gradings are kept; run the same command again to go on", file=sys.stderr)
        return 130
    failed = [outcome for outcome in outcomes if outcome.status == "grader error"]
    for outcome in failed:
        print(f"grader error for {outcome.student}: {outcome.detail.splitlines()[0]}", file=sys.stderr)
    graded = sum(outcome.status == "graded" for outcome in outcomes)
    print(f"{graded} graded, {len(outcomes) - graded - len(failed)} skipped (unchanged), {len(failed)} grader error(s)")
    write_gradebook(out, only)
    report_command(out, out, None, only, required=False)
    return EXIT_OK


def refuse_roster(submissions: Path, out: Path, selected: rubric.Rubric, isolation: sandbox.Isolation) -> int:
    """grade-all where isolation is required but missing: the reason in every student's results.json, exit 2."""
    from autograder import roster

    reason = isolation.refusal()
    result = failed_grading(selected, reason, 0.0, run_environment(isolation, True))
    for submission in roster.students(submissions):
        (out / submission.name).mkdir(parents=True, exist_ok=True)
        reports.write_results_json(result, out / submission.name / "results.json")
        reports.write_summary_md(result, out / submission.name / "summary.md")
    print(f"autograde: {reason}", file=sys.stderr)
    print("(--no-require-isolation grades anyway, and says so on the first line of every report)", file=sys.stderr)
    return EXIT_ERROR


def write_gradebook(results: Path, only: list[str] | None = None) -> int:
    """The roster's gradebook (CSV and overview), over the items that were graded."""
    from autograder import gradebook

    entries = gradebook.write(results, results, rubric.load().select(only))
    print(f"wrote {results / 'gradebook.csv'} and {results / 'overview.md'} ({len(entries)} students)")
    return EXIT_OK


def missing_extra(error: ImportError, extra: str, purpose: str) -> str:
    """What to install when an optional dependency is missing."""
    return f"{purpose} needs {error.name or error}: python -m pip install -e '.[{extra}]' (from the grader's folder)"


def report_command(
    results: Path, out: Path, roster: Path | None, only: list[str] | None = None, required: bool = True
) -> int:
    """Write out/report.html (the class report) and out/misconceptions.md from the gradings under results."""
    from autograder import roster_matrix as rosters

    if not results.is_dir():
        print(f"autograde: {results} is not a folder of gradings", file=sys.stderr)
        return EXIT_ERROR
    try:
        from autograder import classreport
    except ImportError as error:  # matplotlib comes with the report extra
        print(f"autograde: {missing_extra(error, 'report', 'the class report')}", file=sys.stderr)
        return EXIT_ERROR if required else EXIT_OK
    try:
        selected = rubric.load().select(only)
        expected = rosters.repositories(roster) if roster else None
    except (ValueError, OSError, rosters.RosterError) as error:
        print(f"autograde: {error}", file=sys.stderr)
        return EXIT_ERROR
    report = classreport.write(results, out, selected, expected)
    print(
        f"wrote {out / classreport.PAGE} and {out / classreport.TABLE}: {len(report.graded)} graded, "
        f"{len(report.ungraded)} without a grade, {len(report.misconceptions)} catalogue mistakes named"
    )
    return EXIT_OK


def nbgrader_command(course: Path, assignment: str) -> int:
    """Write the nbgrader course directory; print what comes next."""
    try:
        from autograder import notebooks
    except ImportError as error:  # nbformat comes with nbgrader, in the nbgrader extra
        print(f"autograde: {missing_extra(error, 'nbgrader', 'the nbgrader course')}", file=sys.stderr)
        return EXIT_ERROR
    written = notebooks.build_course(course, assignment)
    for path in written:
        print(f"wrote {path}")
    print(f"next: cd {course} && nbgrader generate_assignment {assignment} --force")
    return EXIT_OK


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


def release_command(target: Path, force: bool, classroom: bool = False) -> int:
    """Write the student repository into target (its workflow reporting to GitHub Classroom with `classroom`)."""
    from autograder import release

    try:
        written = release.release(target, force, classroom)
    except release.ReleaseError as error:
        print(f"autograde: {error}", file=sys.stderr)
        return EXIT_ERROR
    print(f"wrote the student repository to {target} ({len(written)} files)")
    return EXIT_OK


def gradebook_command(results: Path, out: Path, roster: Path | None) -> int:
    """Merge every student's results.json under results into out/gradebook.csv and out/overview.md."""
    from autograder import gradebook
    from autograder import roster_matrix as rosters

    if not results.is_dir():
        print(f"autograde: {results} is not a folder of gradings", file=sys.stderr)
        return EXIT_ERROR
    try:
        expected = rosters.repositories(roster) if roster else None
    except (OSError, rosters.RosterError) as error:
        print(f"autograde: {error}", file=sys.stderr)
        return EXIT_ERROR
    entries = gradebook.write(results, out, rubric.load(), expected)
    failed = [entry for entry in entries if entry.error]
    print(f"wrote {out / 'gradebook.csv'} and {out / 'overview.md'}: {len(entries)} students")
    for entry in failed:
        print(f"  no grade for {entry.student}: {entry.error}", file=sys.stderr)
    return EXIT_OK


def merge_command(sources: list[Path], out: Path) -> int:
    """Copy each student's newest grading among the sources into out."""
    from autograder import merge

    try:
        picks = merge.merge(sources, out)
    except merge.MergeError as error:
        print(f"autograde: {error}", file=sys.stderr)
        return EXIT_ERROR
    replaced = sum(pick.others for pick in picks)
    print(f"wrote {out}: {len(picks)} students, the newest grading of each ({replaced} older ones left out)")
    return EXIT_OK


def gradescope_command(out: Path) -> int:
    """Write the Gradescope autograder bundle."""
    from autograder import gradescope

    names = gradescope.build(out)
    print(f"wrote {out} ({len(names)} files): upload it as the assignment's autograder")
    return EXIT_OK

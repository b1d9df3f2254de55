"""What each `autograde` command does, as functions the CLI hands off to."""

import os
import shutil
import sys
import tempfile
import time
import traceback
from functools import partial
from pathlib import Path

from autograder import integrity, progress, rubric, sandbox, stubs
from autograder.grading import ceiling, rubric_record, writers
from autograder.grading.grade import (
    GradingError,
    NothingToGrade,
    failed_grading,
    grade,
    opted_out,
    run_environment,
)
from autograder.grading.results import Failure, GradingResult
from autograder.grading.submission import Submission
from autograder.locations import SOLUTIONS
from autograder.text import clean, escaped

# 0: done; 1: below --fail-under (or a check that failed); 2: a usage error or a refusal (nothing graded);
# 3: grade-all ran, but some students have no grade for a reason that is not theirs (grader errors, named)
EXIT_OK, EXIT_BELOW, EXIT_ERROR, EXIT_NOT_GRADED = 0, 1, 2, 3


def fail(reason: object, status: int = EXIT_ERROR) -> int:
    """How a command stops short: `autograde: REASON` on stderr; returns the exit status (2 unless told)."""
    print(f"autograde: {reason}", file=sys.stderr)
    return status


def grade_command(
    submission: Path | Submission,
    out: Path,
    only: list[str] | None,
    fail_under: float | None,
    require_isolation: bool | None = None,
    rubric_file: Path | None = None,
) -> int:
    """Grade, write results.json and summary.md (always), print the table, choose the exit status.

    `require_isolation`: see `grading.grade.grade`; a refusal exits 2 with the reason in results.json.
    `rubric_file`: another rubric than the grader's own (a course section's).
    """
    try:
        selected = rubric.load(rubric_file).select(only)
    except ValueError as error:
        return fail(error)
    return grade_by(submission, out, selected, fail_under, require_isolation)


def grade_fork_command(
    submission: Path,
    out: Path,
    only: list[str] | None,
    fail_under: float | None,
    require_isolation: bool | None = None,
    rubric_file: Path | None = None,
) -> int:
    """`autograde grade FORK`: `grade_command`, but a roster given for one fork is refused, nothing written."""
    from autograder.roster import grade_all

    roster = grade_all.not_a_fork(submission)
    return fail(roster) if roster else grade_command(submission, out, only, fail_under, require_isolation, rubric_file)


def grade_by(
    submission: Path | Submission,
    out: Path,
    selected: rubric.Rubric,
    fail_under: float | None,
    require_isolation: bool | None,
    notes: bool = False,
) -> int:
    """`grade_command` once its rubric is read (and narrowed by --only); with `notes`, also integrity.json
    (the instructor's integrity notes: grade-all's gradings only, never a student's own preview)."""
    started = time.monotonic()
    status = EXIT_OK
    try:
        if require_isolation is False:  # an explicit opt-out comes first, on the terminal as in every report
            print(opted_out(sandbox.available()), file=sys.stderr)
        print_isolation(sandbox.available())  # inside: a probe that fails still leaves a results.json
        with ceiling.bounded(selected.limits.grader_memory_bytes) as bound:  # what checking an answer may cost
            result = grade(submission, selected, require_isolation)
        result.environment["grader_memory_bytes"] = bound
    except GradingError as error:
        environment = run_environment(sandbox.available(), require_isolation)
        # nothing to read is the student's; a refusal or a suite that did not run is the grader's (retried)
        why = Failure.NOT_GRADED if isinstance(error, NothingToGrade) else Failure.GRADER_ERROR
        result = failed_grading(selected, str(error), time.monotonic() - started, environment, why)
        status = fail(error)  # and results.json says why, below
    except Exception as error:  # a grader bug must still leave a results.json behind
        message = f"the grader failed unexpectedly ({type(error).__name__}: {escaped(str(error))})"
        seconds = time.monotonic() - started
        result, status = failed_grading(selected, message, seconds, failure=Failure.GRADER_ERROR), EXIT_ERROR
        print(clean(traceback.format_exc()), file=sys.stderr)  # it may quote a student's file name
    out.mkdir(parents=True, exist_ok=True)
    writers.write_all(result, out, os.environ.get("GITHUB_STEP_SUMMARY"))  # results.json whatever else fails
    if notes:
        write_notes(result, out)
    print(writers.table(result))
    print(f"\nwrote {out / 'results.json'} and {out / 'summary.md'} ({result.execution_time:.1f} s)")
    if status == EXIT_OK and fail_under is not None and result.score < fail_under:
        print(f"score {result.score:g} is below --fail-under {fail_under:g}", file=sys.stderr)
        return EXIT_BELOW
    return status


def write_notes(result: GradingResult, out: Path) -> None:
    """out/integrity.json, written whole (a grading that stopped early has none to give: an empty one)."""
    try:
        integrity.write(result.integrity or integrity.Notes(), out / integrity.FILE)
    except Exception as error:  # the notes never cost a grade
        print(f"autograde: could not write {integrity.FILE}: {escaped(str(error))}", file=sys.stderr)


def grade_one(
    submission: Path,
    out: Path,
    only: list[str] | None,
    require_isolation: bool = True,
    by: rubric.Rubric | None = None,
) -> int:
    """What `grade-all` runs for each student: `autograde grade SUBMISSION --out OUT [--only ...]`, isolation
    required unless `require_isolation` is False, by the rubric grade-all read (`by`; the grader's own when
    None): grade-all passes both in a functools.partial. Its gradings keep the integrity notes (integrity.json)."""
    try:
        selected = (rubric.load() if by is None else by).select(only)
    except ValueError as error:
        return fail(error)
    return grade_by(submission, out, selected, None, require_isolation, notes=True)


def print_isolation(isolation: sandbox.Isolation) -> None:
    """The worker's isolation on the terminal: the layers in force, and any that failed to start."""
    print(f"isolation: {', '.join(isolation.in_force()) or 'interpreter-level only'}", file=sys.stderr)
    for failure in isolation.failures:
        print(f"isolation: failed to start: {failure}", file=sys.stderr)


def grade_reference(
    out: Path,
    only: list[str] | None,
    fail_under: float | None,
    require_isolation: bool | None = None,
    rubric_file: Path | None = None,
) -> int:
    """Grade the reference solutions as if they were a student's fork (a demonstration)."""
    with tempfile.TemporaryDirectory(prefix="autograde-reference-") as folder:
        (Path(folder) / "exercises").mkdir()
        for path in SOLUTIONS.glob("*.py"):
            shutil.copyfile(path, Path(folder) / "exercises" / path.name)
        return grade_command(Path(folder), out, only, fail_under, require_isolation, rubric_file)


def calibrate_command(seeds: int | None, rubric_file: Path | None = None, list_only: bool = False) -> int:
    """Print the calibration table and the verdicts of the grading's rule (early-stopped trainings, seeds decided
    early) against full-length trainings of every seed; exit 1 when a threshold no longer separates right
    from wrong or an item's verdict differs between the two. By `rubric_file` (a section's) when given; with
    `list_only`, train nothing: list what would be checked."""
    from autograder import calibrate

    try:
        chosen = rubric.load(rubric_file)
    except rubric.RubricError as error:
        return fail(error)
    if list_only:
        print("\n".join(calibrate.checked(chosen, seeds)))
        return EXIT_OK
    started = time.monotonic()
    say = partial(_step, started)
    rows = calibrate.calibrate(chosen, seeds, progress=say)
    print(calibrate.table(rows))
    print()
    print(calibrate.near_chance_table(rows))
    verdicts = calibrate.compare(chosen, progress=say)
    print()
    print(calibrate.verdict_table(verdicts))
    differ = [f"{row.item}: {row.student}" for row in verdicts if row.differs]
    share = calibrate.epochs_saved(verdicts)
    left, seeds = calibrate.seeds_not_needed(verdicts)
    print(
        f"\nearly stopping trained {share:.0%} of the full-length epochs; seeds not needed: {left} of {seeds}; "
        f"verdicts that differ: {len(differ)}"
    )
    print("".join(f"  differs: {line}\n" for line in differ), end="")
    print(f"calibrate: took {progress.duration(time.monotonic() - started)}", file=sys.stderr)
    return EXIT_OK if all(row.holds for row in rows) and not differ else EXIT_BELOW


def _step(started: float, line: str) -> None:
    """One step of calibrate's work on stderr, with the time since it started (a training takes minutes)."""
    print(f"  [{progress.clock(time.monotonic() - started)}] {line}", file=sys.stderr, flush=True)


def grade_all_command(
    submissions: Path,
    out: Path,
    jobs: int | None,
    force: bool,
    only: list[str] | None,
    require_isolation: bool = True,
    rubric_file: Path | None = None,
    budget: float | None = None,
) -> int:
    """Grade a roster folder in parallel; write each student's results, then the gradebook.

    Isolation is required unless `require_isolation` is False: where it is missing, no grading
    starts, each student's results.json gives the reason, and the exit status is 2. Every student gets an
    outcome: those left without a grade by a grader error (tried twice) are named, and the exit status is 3.
    `budget`: seconds the run may take (the roster workflow's shard ends before its job's timeout).
    """
    from autograder.roster import grade_all
    from autograder.roster.progress import ProgressReport

    if not submissions.is_dir():
        return fail(f"{submissions} is not a folder of submissions")
    try:  # a rubric file that cannot be used or an unknown name stops here, before anything is written
        selected = rubric.load(rubric_file).select(only)
    except ValueError as error:
        return fail(error)
    refused = grade_all.not_a_roster(submissions)
    if refused:
        return fail(refused)
    jobs = jobs or grade_all.default_jobs()
    out.mkdir(parents=True, exist_ok=True)
    try:
        isolation = sandbox.available()
        print_isolation(isolation)
        if require_isolation and isolation.refusal():
            return refuse_roster(submissions, out, selected, isolation)
        grade = partial(grade_one, require_isolation=require_isolation, by=selected)
        shown = ProgressReport(jobs=jobs)
        outcomes = grade_all.grade_all(submissions, out, jobs, grade, force, shown, only, selected, budget)
    except ValueError as error:
        return fail(error)
    except KeyboardInterrupt:
        print("\ninterrupted: finished gradings are kept; run the same command again to go on", file=sys.stderr)
        return 130
    failed = print_outcomes(outcomes, time.monotonic() - shown.started)
    status = EXIT_OK
    try:
        write_gradebook(out, selected)
        write_report(out, out, selected, None, required=False)
    except OSError as error:  # a full disk: every student's results.json is written (or removed) already
        why = f"{type(error).__name__}: {escaped(str(error))}"
        status = fail(f"could not write the gradebook or the report ({why}): `autograde gradebook` writes them later")
    if failed:  # said even where the gradebook could not be written: who has no grade is on the terminal
        fail(f"{failed} student(s) not graded because of a grader error: grade them again")
    return status if status != EXIT_OK else EXIT_NOT_GRADED if failed else EXIT_OK


def print_outcomes(outcomes: list, seconds: float) -> int:
    """Each student without a grade, and why; the counts and how long the gradings took. Returns how many have a
    grader error."""
    from autograder.roster.grade_all import Status

    failed = [outcome for outcome in outcomes if outcome.status == Status.GRADER_ERROR]
    for outcome in outcomes:
        if outcome.status in (Status.GRADER_ERROR, Status.NOT_GRADED):
            why = (outcome.detail.splitlines() or [""])[0]
            print(f"{outcome.status} for {outcome.student}: {why}", file=sys.stderr)
    counts = {status: sum(outcome.status == status for outcome in outcomes) for status in Status}
    retried = sum(outcome.retried for outcome in outcomes)
    print(
        f"{counts[Status.GRADED]} graded, {counts[Status.SKIPPED]} skipped (unchanged), "
        f"{counts[Status.NOT_GRADED]} with nothing to grade, {len(failed)} grader error(s) "
        f"({retried} tried again alone), in {progress.duration(seconds)}"
    )
    return len(failed)


def refuse_roster(submissions: Path, out: Path, selected: rubric.Rubric, isolation: sandbox.Isolation) -> int:
    """grade-all where isolation is required but missing: the reason in every student's results.json, exit 2."""
    from autograder.roster import grade_all

    reason = isolation.refusal()
    result = failed_grading(selected, reason, 0.0, run_environment(isolation, True))
    for submission in grade_all.students(submissions):
        (out / submission.name).mkdir(parents=True, exist_ok=True)
        writers.write_all(result, out / submission.name)
    return fail(f"{reason}\n(--no-require-isolation grades anyway, and says so on the first line of every report)")


def write_gradebook(results: Path, selected: rubric.Rubric) -> int:
    """The roster's gradebook (CSV and overview), over the items that were graded."""
    from autograder.roster import gradebook

    entries = gradebook.write(results, results, selected)
    print(f"wrote {results / 'gradebook.csv'} and {results / 'overview.md'} ({_counted(len(entries), 'student')})")
    return EXIT_OK


def roster_names(roster: Path | None, folders: dict[str, str], where: str) -> list[str] | None:
    """The students a roster file names (None without one): repositories or a local roster's folder names,
    refused (RosterError) where a line misnames one of `folders` (each folder of gradings and whom it grades)."""
    from autograder.roster import shards

    if roster is None:
        return None
    names = shards.names(roster)
    shards.check_names(roster, names, folders, where)
    return names


def missing_extra(error: ImportError, extra: str, purpose: str) -> str:
    """What to install when an optional dependency is missing."""
    return f"{purpose} needs {error.name or error}: python -m pip install -e '.[{extra}]' (from the grader's folder)"


def report_command(
    results: Path,
    out: Path,
    roster: Path | None,
    only: list[str] | None = None,
    required: bool = True,
    rubric_file: Path | None = None,
) -> int:
    """Write out/report.html (the class report) and out/misconceptions.md from the gradings under results, by the
    rubric they record (`rubric_file`, when given, must be that one)."""
    from autograder.roster import gradebook

    if not results.is_dir():
        return fail(f"{results} is not a folder of gradings")
    try:
        selected = rubric_record.graded_by([results], rubric_file).select(only)
        expected = roster_names(roster, gradebook.students(results), str(results))
    except (ValueError, OSError) as error:  # a RosterError is a ValueError
        return fail(error)
    if no_gradings(results):  # after the rubric: a bad rubric is refused the same way by every command
        return fail(no_gradings(results))
    return write_report(results, out, selected, expected, required)


def no_gradings(results: Path) -> str:
    """Why `results` is not a folder of gradings the report can read ("" when it is): what the report expects."""
    expects = "the report expects a folder with one subfolder per student, each holding its results.json"
    if (results / "results.json").is_file():
        return (
            f"{escaped(str(results))} is one grading (its results.json is right there): {expects} (grade-all's --out)"
        )
    if not any((folder / "results.json").is_file() for folder in results.iterdir() if folder.is_dir()):
        return f"{escaped(str(results))} holds no gradings: {expects} (grade-all's --out)"
    return ""


def write_report(
    results: Path, out: Path, selected: rubric.Rubric, expected: list[str] | None, required: bool = True
) -> int:
    """The class report of the gradings under results; without matplotlib, exit 2 when `required`, else 0."""
    try:
        from autograder import classreport
    except ImportError as error:  # matplotlib comes with the report extra
        return fail(missing_extra(error, "report", "the class report"), EXIT_ERROR if required else EXIT_OK)
    from autograder.roster.gradebook import GRADER_ERROR

    report = classreport.write(results, out, selected, expected)
    faults = sum(student.error.startswith(GRADER_ERROR) for student in report.ungraded)
    print(
        f"wrote {out / classreport.PAGE} and {out / classreport.TABLE}: {len(report.graded)} graded, "
        f"{len(report.ungraded)} without a grade ({faults} of them by a grader error), "
        f"{len(report.misconceptions)} catalogue mistakes named, "
        f"{len(report.noted)} students with integrity notes (“Look at this code”), "
        f"{len(report.statistics.pointed_out) if report.statistics else 0} items pointed out (“Item statistics”)"
    )
    if report.health.graders:  # the page says it too, in its health section
        print(f"autograde: {report.health.graders}", file=sys.stderr)
    return EXIT_OK


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def similarity_command(roster: Path, out: Path, known: list[Path]) -> int:
    """Compare the roster's students with one another and with the known sources; write the files into OUT."""
    from autograder.similarity import compare, outputs, run

    found = run.run(roster, known)
    for unread in found.unread:  # a student's file names and errors, shown inert
        print(f"autograde: not compared: {escaped(unread)}", file=sys.stderr)
    written = outputs.write_outputs(found.similarity, out)
    close = sum(pair.score >= compare.CLOSE for pair in found.similarity.pairs)
    known, clusters = len(found.similarity.known), len(found.similarity.clusters)
    print(
        f"wrote {', '.join(str(path) for path in written)}: {len(found.similarity.pairs)} pairs ({close} to look at), "
        f"{_counted(known, 'student')} close to a known source, {_counted(clusters, 'group')} of three or more"
    )
    return EXIT_OK


def nbgrader_command(course: Path, assignment: str, rubric_file: Path | None = None) -> int:
    """Write the nbgrader course directory (its points and thresholds from `rubric_file` when given); print
    what comes next."""
    try:
        from autograder.release import nbgrader_course
    except ImportError as error:  # nbformat comes with nbgrader, in the nbgrader extra
        return fail(missing_extra(error, "nbgrader", "the nbgrader course"))
    try:
        chosen = rubric.load(rubric_file)
    except rubric.RubricError as error:
        return fail(error)
    shown = progress.Progress("nbgrader: notebooks written")
    written = nbgrader_course.build_course(course, assignment, chosen, shown)
    shown.finish()
    for path in written:
        print(f"wrote {path}")
    print(f"next: cd {course} && nbgrader generate_assignment {assignment} --force")
    return EXIT_OK


def rubric_check_command(path: Path | None) -> int:
    """Check a rubric file (the grader's own when None) and print what it sets; exit 2 saying what is wrong."""
    try:
        found = rubric.load(path)
    except rubric.RubricError as error:
        return fail(error)
    print("\n".join(rubric.describe(found)))
    return EXIT_OK


def todo_check_command(keys: list[str]) -> int:
    """Say whether each exercise of `keys` (every one for none) is complete: a line per requirement, what to do for
    each one missing; exit 1 when something is, 2 (nothing checked) for a key the week has no exercise for."""
    from autograder.todos import completeness

    week = completeness.known()
    unknown = [key for key in keys if key not in week]
    if unknown:
        return fail(
            f"no exercise {escaped(unknown[0])} in autograder/todos/: the week's are {', '.join(week)}. A new one is "
            f"its record, autograder/todos/<key>/record.toml, beside its TODO in solutions/ (docs/maintaining.md, "
            f"'Add or change a TODO')"
        )
    started, checked, incomplete = time.monotonic(), 0, []
    for exercise in completeness.check(keys):  # each said as soon as it is checked: all of them take minutes
        print("\n".join(completeness_lines(exercise)), flush=True)
        checked += 1
        incomplete += [] if exercise.complete else [exercise.key]
    said = f"{checked - len(incomplete)} of {_counted(checked, 'exercise')} complete"
    print(
        said + (f"; something missing in {', '.join(incomplete)}" if incomplete else "") + ", checked in "
        f"{progress.duration(time.monotonic() - started)}"
    )
    return EXIT_BELOW if incomplete else EXIT_OK


def completeness_lines(exercise) -> list[str]:
    """An exercise's key and title, then a line per finding: its status, its requirement, its words."""
    lines = [exercise.key + (f" ({exercise.title})" if exercise.title else "")]
    return lines + [f"  {finding.status:<7}  {finding.requirement}: {finding.words}" for finding in exercise.findings]


def stubs_command(check: bool) -> int:
    if check:
        problems = stubs.differences()
        for problem in problems:
            print(f"exercises/{problem}", file=sys.stderr)
        if problems:
            print("exercises/ is out of date: run `autograde stubs`", file=sys.stderr)
            return EXIT_BELOW
        print("exercises/ is up to date: the stubs are what solutions/ generates")
        return EXIT_OK
    changed = stubs.write_exercises()
    print(f"exercises/: {len(changed)} file(s) written" + (f" ({', '.join(changed)})" if changed else ""))
    return EXIT_OK


def release_command(
    target: Path, force: bool, classroom: bool = False, rubric_file: Path | None = None, cache: bool = True
) -> int:
    """Write the student repository into target (its workflow reporting to GitHub Classroom with `classroom`), its
    README's points and check_training's settings from `rubric_file` when given. The public tests' recording
    (a minute; a module unchanged since a release read from the cache unless `cache` is off) shows its progress;
    the whole says how long it took."""
    from autograder.release import public_mistakes, student_repository

    try:
        chosen = rubric.load(rubric_file)
    except rubric.RubricError as error:
        return fail(error)
    shown = progress.Progress("release: recording the public tests over the known mistakes")
    try:
        with public_mistakes.reporting(shown), public_mistakes.caching(cache):
            written = student_repository.release(target, force, classroom, chosen)
    except student_repository.ReleaseError as error:
        return fail(error)
    took = shown.finish()
    print(f"wrote the student repository to {target} ({len(written)} files) in {took}")
    return EXIT_OK


def gradebook_command(results: Path, out: Path, roster: Path | None, rubric_file: Path | None = None) -> int:
    """Merge every student's results.json under results into out/gradebook.csv and out/overview.md, by the rubric
    they record (`rubric_file`, when given, must be that one)."""
    from autograder.roster import gradebook, shards

    if not results.is_dir():
        return fail(f"{results} is not a folder of gradings")
    try:
        selected = rubric_record.graded_by([results], rubric_file)
        expected = roster_names(roster, gradebook.students(results), str(results))
    except (OSError, shards.RosterError, rubric.RubricError) as error:
        return fail(error)
    entries = gradebook.write(results, out, selected, expected)
    failed = [entry for entry in entries if entry.error]
    print(f"wrote {out / 'gradebook.csv'} and {out / 'overview.md'}: {_counted(len(entries), 'student')}")
    for entry in failed:
        print(f"  no grade for {entry.student}: {entry.error}", file=sys.stderr)
    mixed = gradebook.mixed_graders([entry.fingerprint for entry in entries if entry.total is not None])
    if mixed:
        print(f"autograde: {mixed}", file=sys.stderr)
    faults = sum(entry.error.startswith(gradebook.GRADER_ERROR) for entry in failed)
    if faults:
        print(f"{faults} of them not graded because of a grader error: grade them again", file=sys.stderr)
    return EXIT_OK


def merge_command(sources: list[Path], out: Path, roster: Path | None = None) -> int:
    """Copy each student's newest grading among the sources into out; name every student left without a grade
    (a grading cut short, a grader error, and with `roster` a student no source holds: a shard that uploaded
    nothing)."""
    from autograder.roster import merge, shards

    try:
        held = merge.students(sources)
        expected = roster_names(roster, held, " ".join(map(str, sources))) or []
        picks = merge.merge(sources, out)
    except (merge.MergeError, shards.RosterError, OSError) as error:
        return fail(error)
    replaced = sum(pick.others for pick in picks)
    print(f"wrote {out}: {len(picks)} students, the newest grading of each ({replaced} older ones left out)")
    missing = [(escaped(pick.student), pick.no_grade) for pick in picks if pick.no_grade]
    missing += [(name, shards.no_folder(name)) for name in shards.without_folder(expected, held)]
    for student, why in missing:
        print(f"  no grade for {student}: {escaped(why)}")
    if missing:
        print(f"{len(missing)} student(s) without a grade: the gradebook names them; re-run them")
    mixed = merge.mixed(picks, out)
    if mixed:
        print(f"autograde: {mixed}", file=sys.stderr)
    return EXIT_OK


def gradescope_command(out: Path, rubric_file: Path | None = None) -> int:
    """Write the Gradescope autograder bundle: it grades by `rubric_file` when given, else the grader's own."""
    from autograder.release import gradescope

    try:
        chosen = rubric.load(rubric_file)
    except rubric.RubricError as error:
        return fail(error)
    names = gradescope.build(out, rubric_text=chosen.text if rubric_file else None)  # a section's: written whole
    by = f"it grades by {rubric_file}" if rubric_file else "it grades by the grader's own rubric"
    print(f"wrote {out} ({len(names)} files; {by}): upload it as the assignment's autograder")
    return EXIT_OK

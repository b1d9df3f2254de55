"""`autograde gradebook RESULTS_DIR`: merge a roster's gradings into one CSV and one overview.

Every subdirectory of RESULTS_DIR is one student: `results.json` (written by `autograde grade`),
optionally `student` (the name to show; default: the folder's name), `commit` (else the
results' extra_data.commit), `commit-time`, `deadline` (the one applied to this student),
`graded-at` and `error` (why there is nothing to grade); the roster workflow writes them.
A student whose results are missing, unreadable, partial or from a grading that crashed is
listed with the reason and no total: never dropped, never a silent zero.

With the rubric's [late], the penalty is applied here, from the recorded `commit-time` and
`deadline`, to the score the grading gave (results.json keeps it as graded): whoever runs the
gradebook again, on a merge or a re-run, gets the same totals. With `keep = "better"` a student's
folder may hold their last on-time commit's grading in ON_TIME/; the higher total after the
penalty counts.
"""

import csv
import json
import statistics
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from autograder import TITLE
from autograder.fingerprint import SHORT, recorded
from autograder.grading.results import NOT_THE_STUDENTS
from autograder.roster.shards import no_folder, without_folder
from autograder.rubric import Late, Rubric, days, late_policy, percent
from autograder.text import cell, code, number, spreadsheet

ON_TIME = "on-time"  # a student's folder: ON_TIME/ holds the grading of their last on-time commit (keep = "better")


@dataclass
class Entry:
    student: str
    commit: str = ""
    commit_time: str = ""
    deadline: str = ""  # the deadline applied to this student (theirs on the roster, else the run's)
    graded_at: str = ""
    total: float | None = None  # None when there is no valid grade
    max_score: float = 0.0
    scores: dict[str, float] = field(default_factory=dict)  # item name -> score
    error: str = ""
    fingerprint: str = ""  # the digest of the grader that made this grading ('' when it records none)
    document: dict = field(default_factory=dict, repr=False)  # the results.json read, for the class report
    folder: Path | None = None  # the grading read: the student's folder, or its ON_TIME folder
    # with the rubric's [late], when the commit time and the deadline are recorded:
    late_by: timedelta | None = None  # the commit's time after the deadline (negative: before it)
    days_late: int | None = None  # whole days late, a part of a day counting as one
    raw_total: float | None = None  # the total the grading gave, before the penalty
    penalty: float | None = None  # the points taken for lateness: total = raw_total - penalty
    passed_over: "Entry | None" = None  # keep = "better": the student's other grading, whose total is lower


def _text(folder: Path, name: str) -> str:
    path = folder / name
    return path.read_text(encoding="utf-8", errors="replace").strip() if path.is_file() else ""


def student_of(folder: Path) -> str:
    """Whom a folder of gradings grades: the student it records (the roster workflow's owner/name), else its name."""
    return _text(folder, "student") or folder.name


def students(results: Path) -> dict[str, str]:
    """Each student folder of `results` by its name, with whom it grades (what a roster file's line names)."""
    return {folder.name: student_of(folder) for folder in sorted(results.iterdir()) if folder.is_dir()}


def _grading_problem(document: object, rubric: Rubric) -> str:
    if not isinstance(document, dict) or not isinstance(document.get("tests"), list):
        return "results.json is not a grading result (no tests)"
    extra = document.get("extra_data") if isinstance(document.get("extra_data"), dict) else {}
    fault = grader_fault(document["tests"])
    if fault:
        return fault
    if extra.get("grading_error"):
        return f"grading failed: {extra['grading_error']}"
    names = {test.get("name") for test in document["tests"] if isinstance(test, dict)}
    missing = [item.name for item in rubric.items if item.name not in names]
    if missing:
        graded = len(rubric.items) - len(missing)
        return f"graded only {graded} of {len(rubric.items)} items (missing {missing[0]}, ...)"
    return ""


GRADER_ERROR = "not graded: grader error"  # how the error of a grading that is not the student's doing begins


def grader_fault(tests: list) -> str:
    """'not graded: grader error (...)' when an item failed for a reason that is not the student's (a grader
    error, a worker that did not warm up): such a grading never stands as a grade, not even a 0; else ''."""
    for test in tests:
        extra = test.get("extra_data") if isinstance(test, dict) else None
        if isinstance(extra, dict) and extra.get("failure") in NOT_THE_STUDENTS:
            lines = str(test.get("output", "")).strip().removeprefix("Not graded: ").splitlines() or [""]
            return f"{GRADER_ERROR} ({extra['failure']} in {test.get('name')}): {lines[0][:300]}"
    return ""


def read_entry(folder: Path, rubric: Rubric) -> Entry:
    """One student's row, from their folder: their grading, with the rubric's late-work policy applied."""
    entry = read_grading(folder, rubric)
    if rubric.late is None:
        return entry
    entry = with_penalty(entry, rubric.late)
    if rubric.late.keep == "better" and (folder / ON_TIME).is_dir():
        on_time = with_penalty(read_grading(folder / ON_TIME, rubric), rubric.late)
        on_time.student = entry.student  # the student's folder names them, whatever the grading inside says
        entry = better(entry, on_time)
    return entry


def read_grading(folder: Path, rubric: Rubric) -> Entry:
    """One grading as the grader scored it, from its folder."""
    record = (_text(folder, name) for name in ("commit", "commit-time", "deadline", "graded-at"))
    entry = Entry(student_of(folder), *record, max_score=rubric.total, folder=folder)
    if _text(folder, "error"):
        entry.error = _text(folder, "error").splitlines()[0]
        return entry
    try:
        document = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        entry.error = "no results.json"
        return entry
    except (OSError, ValueError) as problem:
        entry.error = f"results.json unreadable ({type(problem).__name__})"
        return entry
    entry.document = document if isinstance(document, dict) else {}
    extra = document.get("extra_data", {}) if isinstance(document, dict) else {}
    entry.commit = entry.commit or str(extra.get("commit", "") if isinstance(extra, dict) else "")
    entry.fingerprint = recorded(document)
    entry.error = _grading_problem(document, rubric)
    if entry.error:
        return entry
    try:
        entry.scores = {
            str(test["name"]): float(test.get("score", 0)) for test in document["tests"] if isinstance(test, dict)
        }
    except (KeyError, TypeError, ValueError):
        entry.error = "results.json has a test without a name or a numeric score"
        return entry
    entry.total = sum(entry.scores.get(item.name, 0.0) for item in rubric.items)
    return entry


def moment(text: str) -> datetime | None:
    """An ISO 8601 time (UTC when it has no offset); None when it is not one."""
    try:
        found = datetime.fromisoformat(text)
    except ValueError:
        return None
    return found if found.tzinfo else found.replace(tzinfo=UTC)


def with_penalty(entry: Entry, late: Late) -> Entry:
    """The entry with the late penalty taken from its total, from its recorded commit time and deadline."""
    committed, deadline = moment(entry.commit_time), moment(entry.deadline)
    if committed is None or deadline is None:
        return entry  # graded outside the roster workflow: nothing says when the work came in
    entry.late_by = committed - deadline
    entry.days_late = late.days_late(entry.late_by)
    if entry.days_late > late.max_days:
        entry.error = (
            f"commit {entry.commit[:12]} is {days(entry.days_late)} late; the rubric grades up to {days(late.max_days)}"
        )
        entry.total = None
    if entry.total is not None:
        entry.raw_total, entry.penalty = entry.total, late.penalty(entry.total, entry.days_late)
        entry.total = round(entry.raw_total - entry.penalty, 2)
    return entry


def better(latest: Entry, on_time: Entry) -> Entry:
    """keep = "better": the grading with the higher total after the penalty (the on-time one on a tie)."""
    if on_time.error or latest.error:
        failed, which = (on_time, "the last on-time commit") if on_time.error else (latest, "the last commit")
        latest.error, latest.total = f"{which}: {failed.error}", None  # no grade until both are known
        return latest
    kept, other = (on_time, latest) if (on_time.total or 0.0) >= (latest.total or 0.0) else (latest, on_time)
    kept.passed_over = other
    return kept


def collect(results: Path, rubric: Rubric, roster: list[str] | None = None) -> list[Entry]:
    """Every student folder's entry, plus an error entry for each roster name without a folder."""
    entries = [read_entry(folder, rubric) for folder in sorted(results.iterdir()) if folder.is_dir()]
    missing = without_folder(roster or [], students(results))
    entries += [Entry(name, max_score=rubric.total, error=no_folder(name)) for name in missing]
    return sorted(entries, key=lambda entry: entry.student.lower())


_safe = spreadsheet  # a CSV cell a spreadsheet will not read as a formula


LATE_COLUMNS = ["days_late", "raw_total", "penalty"]  # with the rubric's [late], before the total


def write_csv(entries: list[Entry], rubric: Rubric, path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        record = ["student", "deadline", "commit", "commit time", "graded at", *(LATE_COLUMNS if rubric.late else [])]
        items = (item.name for item in rubric.items)
        writer.writerow([*record, "total", "max", *items, "fingerprint", "error"])
        for entry in entries:
            scores = [number(entry.scores.get(item.name)) if entry.total is not None else "" for item in rubric.items]
            first = [entry.student, entry.deadline, entry.commit, entry.commit_time, entry.graded_at]
            late = [number(entry.days_late), number(entry.raw_total), number(entry.penalty)] if rubric.late else []
            marks = [number(entry.total), number(entry.max_score)]
            stamp = _safe(entry.fingerprint[:SHORT])
            writer.writerow([*map(_safe, first), *late, *marks, *scores, stamp, _safe(entry.error)])


def mixed_graders(stamps: list[str]) -> str:
    """'12 students were graded by another grader ...: run grade-all again.' when the gradings' fingerprints
    (one per graded student, '' where none is recorded) are not all one, the most common taken as the roster's."""
    counts = Counter(stamps)
    if len(counts) < 2:
        return ""
    usual, most = counts.most_common(1)[0]
    others = [(stamp[:SHORT] or "none recorded", count) for stamp, count in counts.most_common() if stamp != usual]
    count = sum(students for _, students in others)
    listed = "; ".join(f"{stamp} for {students}" for stamp, students in others[:5]) + ("; ..." * (len(others) > 5))
    were = "students were" if count != 1 else "student was"
    return (
        f"{count} {were} graded by another grader than the other {most} (fingerprint {usual[:SHORT] or 'none'}): "
        f"{listed}. Run grade-all again: every grade should come from the same grader."
    )


def deadlines(entries: list[Entry]) -> str:
    """'Deadline D for 28 students; E for 2 (bob, carol).': the usual deadline first, then the others."""
    counts = Counter(entry.deadline for entry in entries if entry.deadline)
    parts = []
    for deadline, count in counts.most_common():
        names = [entry.student for entry in entries if entry.deadline == deadline]
        listed = f" ({', '.join(names[:10])}{', ...' if len(names) > 10 else ''})" if parts else ""
        parts.append(f"{deadline} for {count} student{'s' * (count != 1)}{listed}")
    return f"Deadline {'; '.join(parts)}." if parts else ""


def _duration(span: timedelta) -> str:
    """'1 day 12 h', '20 h 5 min', '3 min': how long after the deadline, to the minute."""
    minutes = int(span.total_seconds() // 60)
    whole, hours, left = minutes // 1440, minutes % 1440 // 60, minutes % 60
    parts = [days(whole)] * (whole > 0) + [f"{hours} h"] * (hours > 0) + [f"{left} min"] * (left > 0)
    return " ".join(parts) or "less than a minute"


def _penalised(entry: Entry, late: Late) -> str:
    """'was made 1 day 12 h after the deadline, so it counts as 2 days late: 20% of its 90 points taken, 72 left'."""
    taken = percent(min(1.0, late.per_day * (entry.days_late or 0)))
    when = _duration(entry.late_by or timedelta())
    return (
        f"was made {when} after the deadline, so it counts as {days(entry.days_late or 0)} late: "
        f"{taken} of its {number(entry.raw_total)} points taken, {number(entry.total)} left"
    )


def late_note(entry: Entry, late: Late | None) -> str:
    """What the late-work policy did to this student's grade, and why; '' when it did nothing."""
    if late is None or entry.total is None:
        return ""
    other = entry.passed_over
    if other is None:
        return f"Commit {entry.commit[:12]} {_penalised(entry, late)}." if entry.days_late else ""
    if entry.days_late:
        return (
            f"Commit {entry.commit[:12]} {_penalised(entry, late)}, more than the {number(other.total)} of the "
            f"last on-time commit, {other.commit[:12]}."
        )
    than = "more than" if (entry.total or 0) > (other.total or 0) else "as many as"
    return (
        f"The last on-time commit, {entry.commit[:12]}, counts with {number(entry.total)} points, {than} the "
        f"later commit {other.commit[:12]}: that one {_penalised(other, late)}."
    )


def overview(entries: list[Entry], rubric: Rubric) -> str:
    graded = [entry for entry in entries if entry.total is not None]
    failed = [entry for entry in entries if entry.total is None]
    totals = [entry.total for entry in graded if entry.total is not None]
    lines = [f"# Gradebook · {TITLE}", ""]
    faults = sum(entry.error.startswith(GRADER_ERROR) for entry in failed)
    because = f" ({faults} because of a grader error: grade them again)" if faults else ""
    lines.append(f"{len(entries)} students: {len(graded)} graded, {len(failed)} without a grade{because}.")
    if totals:
        lines.append(
            f"Total out of {number(rubric.total)}: mean {statistics.mean(totals):.1f}, "
            f"median {statistics.median(totals):g}, min {min(totals):g}, max {max(totals):g}."
        )
    if deadlines(entries):
        lines.append(cell(deadlines(entries)))
    mixed = mixed_graders([entry.fingerprint for entry in graded])
    if mixed:
        lines += ["", f"**⚠ {cell(mixed)}**"]
    if rubric.late:
        lines.append(f"Late work (the rubric's [late]): {late_policy(rubric.late)}.")
    lines += ["", "## Students", "", "| student | commit | total | max | |", "|---|---|---:|---:|---|"]
    for entry in entries:
        note = f"⚠ {cell(code(entry.error))}" if entry.error else ""  # git's words may name the student's files
        total, most = number(entry.total), number(entry.max_score)
        lines.append(f"| {cell(entry.student)} | {cell(entry.commit[:12])} | {total} | {most} | {note} |")
    lines += ["", "## Full marks per item", "", "| item | points | students with full marks |", "|---|---:|---:|"]
    for item in rubric.items:
        full = sum(entry.scores.get(item.name, 0.0) >= item.points for entry in graded)
        rate = f"{full}/{len(graded)} ({100 * full / len(graded):.0f}%)" if graded else "-"
        lines.append(f"| {item.name} | {number(item.points)} | {rate} |")
    notes = [(entry, late_note(entry, rubric.late)) for entry in graded]
    if any(note for _, note in notes):
        lines += ["", "## Late work", ""]
        lines += [f"- {cell(entry.student)}: {cell(note)}" for entry, note in notes if note]
    if failed:
        lines += ["", "## Grading failed: regrade or follow up", ""]
        lines += [f"- {cell(entry.student)}: {cell(code(entry.error))}" for entry in failed]
    return "\n".join(lines) + "\n"


def write(results: Path, out: Path, rubric: Rubric, roster: list[str] | None = None) -> list[Entry]:
    """Write out/gradebook.csv and out/overview.md; return the entries."""
    entries = collect(results, rubric, roster)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(entries, rubric, out / "gradebook.csv")
    (out / "overview.md").write_text(overview(entries, rubric), encoding="utf-8")
    return entries

"""`autograde gradebook RESULTS_DIR`: merge a roster's gradings into one CSV and one overview.

Every subdirectory of RESULTS_DIR is one student: `results.json` (written by `autograde grade`),
optionally `student` (the name to show; default: the folder's name), `commit` (else the
results' extra_data.commit), `commit-time`, `deadline` (the one applied to this student),
`graded-at` and `error` (why there is nothing to grade); the roster workflow writes them.
A student whose results are missing, unreadable, partial or from a grading that crashed is
listed with the reason and no total: never dropped, never a silent zero.
"""

import csv
import json
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from autograder import TITLE
from autograder.rubric import Rubric
from autograder.text import cell, code


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
    document: dict = field(default_factory=dict, repr=False)  # the results.json read, for the class report


def _text(folder: Path, name: str) -> str:
    path = folder / name
    return path.read_text(encoding="utf-8", errors="replace").strip() if path.is_file() else ""


def _grading_problem(document: object, rubric: Rubric) -> str:
    if not isinstance(document, dict) or not isinstance(document.get("tests"), list):
        return "results.json is not a grading result (no tests)"
    extra = document.get("extra_data") if isinstance(document.get("extra_data"), dict) else {}
    if extra.get("grading_error"):
        return f"grading failed: {extra['grading_error']}"
    names = {test.get("name") for test in document["tests"] if isinstance(test, dict)}
    missing = [item.name for item in rubric.items if item.name not in names]
    if missing:
        graded = len(rubric.items) - len(missing)
        return f"graded only {graded} of {len(rubric.items)} items (missing {missing[0]}, ...)"
    return ""


def read_entry(folder: Path, rubric: Rubric) -> Entry:
    """One student's row, from their folder."""
    record = (_text(folder, name) for name in ("commit", "commit-time", "deadline", "graded-at"))
    entry = Entry(_text(folder, "student") or folder.name, *record, max_score=rubric.total)
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


def collect(results: Path, rubric: Rubric, roster: list[str] | None = None) -> list[Entry]:
    """Every student folder's entry, plus an error entry for each roster name without a folder."""
    entries = [read_entry(folder, rubric) for folder in sorted(results.iterdir()) if folder.is_dir()]
    seen = {entry.student for entry in entries}
    entries += [
        Entry(name, max_score=rubric.total, error="no results: the grading job uploaded nothing")
        for name in roster or []
        if name not in seen
    ]
    return sorted(entries, key=lambda entry: entry.student.lower())


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def _safe(text: str) -> str:
    """A CSV cell a spreadsheet will not read as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def write_csv(entries: list[Entry], rubric: Rubric, path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        record = ["student", "deadline", "commit", "commit time", "graded at"]
        writer.writerow([*record, "total", "max", *(item.name for item in rubric.items), "error"])
        for entry in entries:
            scores = [_number(entry.scores.get(item.name)) if entry.total is not None else "" for item in rubric.items]
            first = [entry.student, entry.deadline, entry.commit, entry.commit_time, entry.graded_at]
            marks = [_number(entry.total), _number(entry.max_score)]
            writer.writerow([*map(_safe, first), *marks, *scores, _safe(entry.error)])


def deadlines(entries: list[Entry]) -> str:
    """'Deadline D for 28 students; E for 2 (bob, carol).': the usual deadline first, then the others."""
    counts = Counter(entry.deadline for entry in entries if entry.deadline)
    parts = []
    for deadline, count in counts.most_common():
        names = [entry.student for entry in entries if entry.deadline == deadline]
        listed = f" ({', '.join(names[:10])}{', ...' if len(names) > 10 else ''})" if parts else ""
        parts.append(f"{deadline} for {count} student{'s' * (count != 1)}{listed}")
    return f"Deadline {'; '.join(parts)}." if parts else ""


def overview(entries: list[Entry], rubric: Rubric) -> str:
    graded = [entry for entry in entries if entry.total is not None]
    failed = [entry for entry in entries if entry.total is None]
    totals = [entry.total for entry in graded if entry.total is not None]
    lines = [f"# Gradebook · {TITLE}", ""]
    lines.append(f"{len(entries)} students: {len(graded)} graded, {len(failed)} without a grade.")
    if totals:
        lines.append(
            f"Total out of {_number(rubric.total)}: mean {statistics.mean(totals):.1f}, "
            f"median {statistics.median(totals):g}, min {min(totals):g}, max {max(totals):g}."
        )
    if deadlines(entries):
        lines.append(cell(deadlines(entries)))
    lines += ["", "## Students", "", "| student | commit | total | max | |", "|---|---|---:|---:|---|"]
    for entry in entries:
        note = f"⚠ {cell(code(entry.error))}" if entry.error else ""  # git's words may name the student's files
        total, most = _number(entry.total), _number(entry.max_score)
        lines.append(f"| {cell(entry.student)} | {cell(entry.commit[:12])} | {total} | {most} | {note} |")
    lines += ["", "## Full marks per item", "", "| item | points | students with full marks |", "|---|---:|---:|"]
    for item in rubric.items:
        full = sum(entry.scores.get(item.name, 0.0) >= item.points for entry in graded)
        rate = f"{full}/{len(graded)} ({100 * full / len(graded):.0f}%)" if graded else "-"
        lines.append(f"| {item.name} | {_number(item.points)} | {rate} |")
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

"""Writers for a GradingResult: results.json (Gradescope), summary.md, the terminal table.

One function per format; none of them changes the result. Every text that may come from the
student (feedback quoting their exception, what they printed, the names of their files) goes
through `autograder.text` first: no control characters, no ANSI escapes, no line that a CI log
would read as a workflow command, names escaped on one line, and in Markdown only as code.
`write_all` writes results.json first, whole or with the scores alone, whatever fails after it.
"""

import functools
import json
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from autograder import TITLE, stubs
from autograder.grading.results import Failure, GradingResult, ItemResult
from autograder.grading.submission import MAX_ENTRIES, Unlisted, Why
from autograder.text import cell, clean, code, escaped, fenced, json_number, number, valid

MAX_TEST_OUTPUT = 4000  # characters per item in results.json
MAX_PRINTED = 1500  # characters of the student's own printing shown per item
MAX_NAMED = 20  # files not read named in summary.md
NOT_DONE = "not done yet: the stub still raises NotImplementedError"  # a whole TODO's row, in the tables


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 30] + f"\n... ({len(text) - limit + 30} more characters)"


def credit_note(item: ItemResult) -> str:
    """' — 2.5 of 5 points kept by the course's rubric' after a credited item's first line; '' otherwise."""
    if item.credited is None:
        return ""
    return f" — {number(item.credited.points)} of {number(item.max_score)} points kept by the course's rubric"


def _feedback(item: ItemResult) -> str:
    """The item's feedback, its first line (the named mistake) ending with the credit the rubric kept."""
    first, newline, rest = clean(item.feedback).partition("\n")
    return first + credit_note(item) + newline + rest


def item_text(item: ItemResult) -> str:
    """What a student reads for one item: the feedback, then what their code printed."""
    parts = [_feedback(item)] if item.feedback else ["Passed." + (f"\n{clean(item.note)}" if item.note else "")]
    if item.output.strip():
        parts.append("Your code printed:\n" + _shorten(clean(item.output), MAX_PRINTED))
    return _shorten("\n\n".join(parts), MAX_TEST_OUTPUT)


NOTED = "passed with another TODO's function stood in: see its note"  # a passing item's note, in the tables


def reason(item: ItemResult) -> str:
    """One line for the tables: a threshold item's accuracy and threshold first, so no cut can hide them."""
    if item.status == "passed":
        return "ok" + (f" ({NOTED})" if item.note else "")
    first = clean(item.feedback).strip().split("\n")[0]
    first = measured(item) + (first if len(first) <= 110 else first[:107] + "...")
    return first + credit_note(item)


def measured(item: ItemResult) -> str:
    """'accuracy 0.62 of 0.80 needed: ' for a threshold item that measured one; '' otherwise."""
    accuracy, threshold = item.measured.get("accuracy"), item.measured.get("threshold")
    if not isinstance(accuracy, (int, float)) or not isinstance(threshold, (int, float)):
        return ""
    return f"accuracy {accuracy:.2f} of {threshold:.2f} needed: "


@dataclass(frozen=True)
class Row:
    """One line of the tables: an item, or a whole TODO not done yet (its items in one line)."""

    name: str
    score: float
    max_score: float
    reason: str
    items: tuple[ItemResult, ...]

    @property
    def passed(self) -> bool:
        return all(item.status == "passed" for item in self.items)


@functools.cache
def todo_labels() -> dict[str, str]:
    """Graded function -> "TODO 4 · gather-at-final-index", from the solutions' markers ({} where they cannot
    be read: the rows then name the function, and the feedback is written all the same)."""
    try:
        return {todo.function.split(".")[0]: todo.label for todo in stubs.todos()}
    except (OSError, ValueError):
        return {}


def not_done(items: list[ItemResult]) -> bool:
    return all(item.failure == Failure.NOT_DONE for item in items)


def rows(result: GradingResult) -> list[Row]:
    """The tables' rows in the rubric's order: one per item, but one per TODO whose items are all not done."""
    found: list[Row] = []
    for function in dict.fromkeys(item.function for item in result.items):
        own = [item for item in result.items if item.function == function]
        if not_done(own):
            name = f"{todo_labels().get(function, function)} ({len(own)} item{'s' * (len(own) != 1)})"
            found.append(Row(name, sum(i.score for i in own), sum(i.max_score for i in own), NOT_DONE, tuple(own)))
        else:
            found += [Row(item.name, item.score, item.max_score, reason(item), (item,)) for item in own]
    return found


def test_data(item: ItemResult) -> dict:
    """A test's machine-readable record: its function, why it failed, what its check measured, the credit
    the rubric kept for its named mistake with its raw score (no timing: the same submission gives the
    same results.json but for execution_time)."""
    failure = {"failure": item.failure} if item.failure else {}
    credited = item.credited
    credit = {}
    if credited is not None:
        applied = {"mistake": credited.mistake, "fraction": credited.fraction, "points": json_number(credited.points)}
        credit = {"raw_score": 0, "credit": applied}
    return {"function": item.function, **failure, **item.measured, **credit}


def gradescope(result: GradingResult) -> dict:
    """The results.json document in Gradescope's autograder format."""
    tests = [
        {
            "name": item.name,
            "score": json_number(item.score),
            "max_score": json_number(item.max_score),
            "status": item.status,
            "output": item_text(item),
            "visibility": "visible",
            "tags": list(item.mistakes),  # the catalogue ids named: the class report counts these
            "extra_data": test_data(item),
        }
        for item in result.items
    ]
    score_line = f"Score {number(result.score, places=2)}/{number(result.max_score, places=2)}"
    document = {
        "score": json_number(result.score),
        "execution_time": round(result.execution_time, 2),
        "output": _first(result, clean(result.error) if result.error else score_line),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {
            "max_score": json_number(result.max_score),
            **result.environment,
            **not_read_data(result),
            **({"grading_error": clean(result.error)} if result.error else {}),
        },
    }
    return document


def not_read_data(result: GradingResult) -> dict[str, object]:
    """results.json's record of the files not read: every name listed (escaped), and why for those with a reason."""
    names = [escaped(entry.path) for entry in result.ignored]
    if result.more_ignored or result.listing_cut:
        names.append("...")
    reasons = [
        {"path": escaped(entry.path), "why": entry.why.value, "reason": entry.reason()}
        for entry in result.ignored
        if entry.why is not Why.NOT_GRADED
    ]
    unlisted = {"release_files": result.unlisted.shipped, "tool_folders": dict(sorted(result.unlisted.tools.items()))}
    return {"ignored_files": names, "left_out": reasons, "ignored_more": result.more_ignored, "not_listed": unlisted}


def _first(result: GradingResult, text: str) -> str:
    """`text` after the result's notice, which always comes first."""
    return f"{result.notice}\n{text}" if result.notice else text


def _valid(value: object) -> object:
    """A document whose every string any UTF-8 writer accepts."""
    if isinstance(value, str):
        return valid(value)
    if isinstance(value, dict):
        return {valid(str(key)): _valid(item) for key, item in value.items()}
    return [_valid(item) for item in value] if isinstance(value, (list, tuple)) else value


def _replace(path: Path, text: str) -> None:
    """Write `text` to `path` whole or not at all: never a file cut short by an error."""
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as written:
            written.write(text)
        os.chmod(name, 0o644)
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise


def write_results_json(result: GradingResult, path: Path) -> None:
    _replace(path, json.dumps(_valid(gradescope(result)), indent=2, ensure_ascii=False) + "\n")


def scores_only(result: GradingResult, problem: str) -> dict:
    """results.json with the grading's scores alone: what is written when the whole document cannot be."""
    tests = [
        {
            "name": item.name,
            "score": json_number(item.score),
            "max_score": json_number(item.max_score),
            "status": item.status,
        }
        for item in result.items
    ]
    output = f"Score {json_number(result.score)}/{json_number(result.max_score)} (the full report could not be written)"
    return {
        "score": json_number(result.score),
        "execution_time": round(result.execution_time, 2),
        "output": output,
        "tests": tests,
        "extra_data": {"max_score": json_number(result.max_score), "report_error": problem},
    }


def write_all(result: GradingResult, out: Path, step_summary: str | None = None) -> list[str]:
    """results.json, summary.md and the job summary (when named); return what could not be written, and why.

    results.json comes first and always: when the whole document cannot be written, one with the scores."""
    problems = []
    try:
        write_results_json(result, out / "results.json")
    except Exception as error:  # a grader bug: the scores must still reach the gradebook
        problems.append(f"results.json in full: {type(error).__name__}: {error}")
        _replace(out / "results.json", json.dumps(scores_only(result, escaped(problems[-1])), indent=2) + "\n")
    writers = [("summary.md", lambda: write_summary_md(result, out / "summary.md"))]
    if step_summary:
        writers.append(("the job summary", lambda: _append(Path(step_summary), markdown(result))))
    for name, write in writers:
        try:
            write()
        except Exception as error:
            problems.append(f"{name}: {type(error).__name__}: {error}")
    for problem in problems:
        print(f"autograde: could not write {escaped(problem)}", file=sys.stderr)
    return problems


def _append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as summary:
        summary.write(text)


def markdown(result: GradingResult) -> str:
    """The summary for humans and for GitHub's job summary: one screen for untouched stubs (a line per TODO)."""
    lines = [
        *([f"**{result.notice}**", ""] if result.notice else []),
        f"## {TITLE}: {number(result.score, places=2)} / {number(result.max_score, places=2)}",
        "",
        "| item | score | max | |",
        "|---|---:|---:|---|",
    ]
    for row in rows(result):
        shown = f"✅ {row.reason}" if row.passed else f"❌ {code(row.reason)}"  # a failure's may quote the student
        score, most = number(row.score, places=2), number(row.max_score, places=2)
        lines.append(f"| {cell(row.name)} | {score} | {most} | {cell(shown)} |")
    failed = [item for row in rows(result) if not_done(list(row.items)) is False for item in row.items]
    failed = [item for item in failed if item.status != "passed"]
    if failed:
        lines += ["", "### What to fix", ""]
        for item in failed:
            lines += [f"<details><summary>{item.name}</summary>", "", fenced(item_text(item)), "", "</details>"]
    noted = [item for item in result.items if item.status == "passed" and item.note]
    if noted:
        lines += ["", "### Passed, with a note", ""]
        for item in noted:
            lines += [f"<details><summary>{item.name}</summary>", "", fenced(item_text(item)), "", "</details>"]
    if result.error:
        lines += ["", f"**Grading stopped early:** {code(clean(result.error))}"]
    return "\n".join([*lines, *not_read_markdown(result)]) + "\n"


def not_read_markdown(result: GradingResult) -> list[str]:
    """summary.md's files not read: those with a reason one per line, the others on one line, every name as code;
    the release's own files and the tools' folders in one line that counts them."""
    noted = [entry for entry in result.ignored if entry.why is not Why.NOT_GRADED]
    plain = [entry for entry in result.ignored if entry.why is Why.NOT_GRADED]
    expected = [f"- not read, as expected: {unlisted_text(result.unlisted, code)}"] if result.unlisted else []
    if not result.ignored:
        return ["", *expected] if expected else []
    lines = ["", "### Not read by the grader", ""]
    lines += [f"- {code(escaped(entry.path))}: {entry.reason()}" for entry in noted[:MAX_NAMED]]
    more = max(0, len(noted) - MAX_NAMED) + max(0, len(plain) - MAX_NAMED) + result.more_ignored
    if plain:
        named = ", ".join(code(escaped(entry.path)) for entry in plain[:MAX_NAMED])
        lines.append(f"- not part of the graded package: {named}")
    if more or result.listing_cut:
        cut = f" (the listing stops after {MAX_ENTRIES:,} entries)" if result.listing_cut else ""
        lines.append(f"- and {more} more{cut}")
    return lines + expected


def unlisted_text(unlisted: Unlisted, show: Callable[[str], str] = str) -> str:
    """'12 files of the release itself; tool folders, not looked into: .git, .venv (2)'."""
    parts = (
        [f"{unlisted.shipped} file{'s' * (unlisted.shipped != 1)} of the release itself"] if unlisted.shipped else []
    )
    if unlisted.tools:
        counted = sorted(unlisted.tools.items())
        named = ", ".join(show(name) + (f" ({count})" if count > 1 else "") for name, count in counted)
        parts.append(f"tool folders, not looked into: {named}")
    return "; ".join(parts)


def write_summary_md(result: GradingResult, path: Path) -> None:
    _replace(path, markdown(result))


def table(result: GradingResult) -> str:
    """The terminal table: item (or a whole TODO not done yet), score, max, one-line reason, and the total."""
    shown = rows(result)
    width = max(len(row.name) for row in shown) if shown else 10
    lines = [f"{'item':<{width}}  score  max  reason", f"{'-' * width}  -----  ---  ------"]
    for row in shown:
        score, most = number(row.score, places=2), number(row.max_score, places=2)
        lines.append(f"{row.name:<{width}}  {score:>5}  {most:>3}  {row.reason}")
    total, most = number(result.score, places=2), number(result.max_score, places=2)
    lines.append(f"{'total':<{width}}  {total:>5}  {most:>3}")
    if result.error:
        lines.append(f"grading stopped early: {clean(result.error)}")
    for entry in (entry for entry in result.ignored if entry.why is not Why.NOT_GRADED):
        lines.append(f"not read: {escaped(entry.path)}: {entry.reason()}")
    if result.unlisted:
        lines.append(f"not read, as expected: {unlisted_text(result.unlisted)}")
    return "\n".join(lines)

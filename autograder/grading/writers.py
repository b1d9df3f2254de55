"""Writers for a GradingResult: results.json (Gradescope), summary.md, the terminal table.

One function per format; none of them changes the result. Every text that may come from the
student (feedback quoting their exception, what they printed, the names of their files) goes
through `autograder.text` first: no control characters, no ANSI escapes, no line that a CI log
would read as a workflow command, names escaped on one line, and in Markdown only as code.
`write_all` writes results.json first, whole or with the scores alone, whatever fails after it.
"""

import json
import os
import sys
import tempfile
from pathlib import Path

from autograder import TITLE
from autograder.grading.results import GradingResult, ItemResult
from autograder.grading.submission import MAX_ENTRIES, Why
from autograder.text import cell, clean, code, escaped, fenced, json_number, number, valid

MAX_TEST_OUTPUT = 4000  # characters per item in results.json
MAX_PRINTED = 1500  # characters of the student's own printing shown per item
MAX_NAMED = 20  # files not read named in summary.md


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
    parts = [_feedback(item)] if item.feedback else ["Passed."]
    if item.output.strip():
        parts.append("Your code printed:\n" + _shorten(clean(item.output), MAX_PRINTED))
    return _shorten("\n\n".join(parts), MAX_TEST_OUTPUT)


def reason(item: ItemResult) -> str:
    """One line for the tables."""
    if item.status == "passed":
        return "ok"
    first = clean(item.feedback).strip().split("\n")[0]
    return (first if len(first) <= 110 else first[:107] + "...") + credit_note(item)


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
    return {"ignored_files": names, "left_out": reasons, "ignored_more": result.more_ignored}


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
    """The summary for humans and for GitHub's job summary."""
    lines = [
        *([f"**{result.notice}**", ""] if result.notice else []),
        f"## {TITLE}: {number(result.score, places=2)} / {number(result.max_score, places=2)}",
        "",
        "| item | score | max | |",
        "|---|---:|---:|---|",
    ]
    for item in result.items:
        shown = "✅ ok" if item.status == "passed" else f"❌ {code(reason(item))}"  # the reason may quote the student
        score, most = number(item.score, places=2), number(item.max_score, places=2)
        lines.append(f"| {cell(item.name)} | {score} | {most} | {cell(shown)} |")
    failed = [item for item in result.items if item.status != "passed"]
    if failed:
        lines += ["", "### What to fix", ""]
        for item in failed:
            lines += [f"<details><summary>{item.name}</summary>", "", fenced(item_text(item)), "", "</details>"]
    if result.error:
        lines += ["", f"**Grading stopped early:** {code(clean(result.error))}"]
    return "\n".join([*lines, *not_read_markdown(result)]) + "\n"


def not_read_markdown(result: GradingResult) -> list[str]:
    """summary.md's files not read: those with a reason one per line, the others on one line, every name as code."""
    noted = [entry for entry in result.ignored if entry.why is not Why.NOT_GRADED]
    plain = [entry for entry in result.ignored if entry.why is Why.NOT_GRADED]
    if not result.ignored:
        return []
    lines = ["", "### Not read by the grader", ""]
    lines += [f"- {code(escaped(entry.path))}: {entry.reason()}" for entry in noted[:MAX_NAMED]]
    more = max(0, len(noted) - MAX_NAMED) + max(0, len(plain) - MAX_NAMED) + result.more_ignored
    if plain:
        named = ", ".join(code(escaped(entry.path)) for entry in plain[:MAX_NAMED])
        lines.append(f"- not part of the graded package: {named}")
    if more or result.listing_cut:
        cut = f" (the listing stops after {MAX_ENTRIES:,} entries)" if result.listing_cut else ""
        lines.append(f"- and {more} more{cut}")
    return lines


def write_summary_md(result: GradingResult, path: Path) -> None:
    _replace(path, markdown(result))


def table(result: GradingResult) -> str:
    """The terminal table: item, score, max, one-line reason, and the total."""
    width = max(len(item.name) for item in result.items) if result.items else 10
    lines = [f"{'item':<{width}}  score  max  reason", f"{'-' * width}  -----  ---  ------"]
    for item in result.items:
        score, most = number(item.score, places=2), number(item.max_score, places=2)
        lines.append(f"{item.name:<{width}}  {score:>5}  {most:>3}  {reason(item)}")
    total, most = number(result.score, places=2), number(result.max_score, places=2)
    lines.append(f"{'total':<{width}}  {total:>5}  {most:>3}")
    if result.error:
        lines.append(f"grading stopped early: {clean(result.error)}")
    for entry in (entry for entry in result.ignored if entry.why is not Why.NOT_GRADED):
        lines.append(f"not read: {escaped(entry.path)}: {entry.reason()}")
    return "\n".join(lines)

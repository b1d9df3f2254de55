"""Writers for a GradingResult: results.json (Gradescope), summary.md, the terminal table.

One function per format; none of them changes the result. Every text that may
come from the student (feedback quoting their exception, what they printed) goes
through `clean` first: no control characters, no ANSI escapes, and no line that a
CI log would read as a workflow command.
"""

import json
import re
from pathlib import Path

from autograder import TITLE
from autograder.grading.results import GradingResult, ItemResult
from autograder.text import json_number, number

ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
MAX_TEST_OUTPUT = 4000  # characters per item in results.json
MAX_PRINTED = 1500  # characters of the student's own printing shown per item


def clean(text: str) -> str:
    """Plain printable text: escapes dropped, workflow commands defused (`::x` -> `: :x`)."""
    text = CONTROL.sub("", ANSI.sub("", text.replace("\r\n", "\n")))
    return "\n".join(": :" + line.lstrip()[2:] if line.lstrip().startswith("::") else line for line in text.split("\n"))


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
            "ignored_files": result.ignored,
            **({"grading_error": clean(result.error)} if result.error else {}),
        },
    }
    return document


def _first(result: GradingResult, text: str) -> str:
    """`text` after the result's notice, which always comes first."""
    return f"{result.notice}\n{text}" if result.notice else text


def write_results_json(result: GradingResult, path: Path) -> None:
    path.write_text(json.dumps(gradescope(result), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


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
        mark = "✅" if item.status == "passed" else "❌"
        cell = reason(item).replace("|", "\\|")
        score, most = number(item.score, places=2), number(item.max_score, places=2)
        lines.append(f"| {item.name} | {score} | {most} | {mark} {cell} |")
    failed = [item for item in result.items if item.status != "passed"]
    if failed:
        lines += ["", "### What to fix", ""]
        for item in failed:
            text = item_text(item).replace("```", "'''")
            lines += [f"<details><summary>{item.name}</summary>", "", "```text", text, "```", "", "</details>"]
    if result.error:
        lines += ["", f"**Grading stopped early:** {clean(result.error)}"]
    if result.ignored:
        lines += [
            "",
            f"Not read by the grader: {', '.join(result.ignored[:20])}" + (" ..." if len(result.ignored) > 20 else ""),
        ]
    return "\n".join(lines) + "\n"


def write_summary_md(result: GradingResult, path: Path) -> None:
    path.write_text(markdown(result), encoding="utf-8")


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
    return "\n".join(lines)

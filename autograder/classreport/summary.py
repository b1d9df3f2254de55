"""The misconception table in Markdown, for GitHub's job summary beside the gradebook's overview."""

from urllib.parse import unquote

from autograder.classreport.data import ClassReport
from autograder.text import cell, code

TOP = 10


def misconception_table(report: ClassReport, top: int = TOP) -> str:
    """The `top` catalogue mistakes named for the most graded students, with the lesson to reread."""
    graded = len(report.graded)
    lines = ["## What to re-teach: the misconceptions named most often", ""]
    if not report.misconceptions:
        return "\n".join([*lines, f"No catalogue mistake was named for any of the {graded} graded students.", ""])
    lines += [
        f"Of {graded} graded students; the whole list, with an example each, is in `report.html`.",
        "",
        "| id | function | students | the mistake | reread |",
        "|---|---|---:|---|---|",
    ]
    for mistake in report.misconceptions[:top]:
        count = len(mistake.students)
        share = f"{count} ({100 * count / graded:.0f}%)" if graded else str(count)
        cells = [mistake.id, f"`{mistake.function}`" if mistake.function else "", share]
        cells += [mistake.explanation, mistake.lesson]
        lines.append("| " + " | ".join(cell(text) for text in cells) + " |")
    if len(report.misconceptions) > top:
        lines += ["", f"... and {len(report.misconceptions) - top} more in `report.html`."]
    return "\n".join(lines) + "\n"


def similarity(href: str) -> str:
    """The summary's line about the similarity page (`href`: its address beside report.html); '' without one."""
    if not href:
        return ""
    where = code(unquote(href))
    return f"\nWho wrote alike, side by side to look at: {where}, beside `report.html` (it changes no grade).\n"

"""The misconception table and the items pointed out, in Markdown, for GitHub's job summary beside the
gradebook's overview."""

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


def items_pointed_out(report: ClassReport) -> str:
    """The items the item statistics point out, each with its facility, discrimination and why, in words."""
    stats = report.statistics
    lines = ["## Items that tell you little", ""]
    if stats is None or not stats.judged:
        graded = stats.graded if stats else 0
        needed = f" (the rubric's [report] asks for {stats.settings.min_students})" if stats else ""
        return "\n".join([*lines, f"{graded} graded students: too few to point an item out{needed}.", ""])
    if not stats.pointed_out:
        return "\n".join([*lines, "None: every item separates the students, and none is passed or failed by all.", ""])
    lines += ["| item | facility | discrimination | why |", "|---|---:|---:|---|"]
    for item in stats.pointed_out:
        cells = [item.item, _fraction(item.facility), _fraction(item.discrimination), item.note]
        lines.append("| " + " | ".join(cell(text) for text in cells) + " |")
    return "\n".join([*lines, "", "Every item's figures, and the mistakes named per TODO, are in `report.html`.", ""])


def _fraction(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"

"""The class report's item statistics section in HTML: the items pointed out in words, then every item's
facility and discrimination, then the mistakes named on each TODO (the figures come from `itemstats`)."""

from html import escape

from autograder.classreport.itemstats import ItemReport, ItemStatistics, TodoMistakes
from autograder.text import number
from autograder.webpage import table

EXPLAINED = (
    "<p><strong>Facility</strong> is the mean fraction of an item's points over the {graded} graded students "
    "(1: everyone has full marks). <strong>Discrimination</strong> is the correlation of the item's score with "
    "the rest of the total, the item left out (the corrected item-total correlation PrairieLearn and Moodle "
    "show): near 1, the students who do well on it do well on the rest; near 0 or below, the item says little "
    "about who knows the week. An item is pointed out when its facility is at least {passes} or at most "
    "{fails}, or its discrimination is below {low} (the rubric's [report]).</p>"
)


def _fraction(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "–"


def pointed_out(report: ItemReport) -> str:
    """The items worth a second look, each with why, in words."""
    if not report.judged:
        return (
            f"<p>{report.graded} graded students: too few to point an item out "
            f"(the rubric's [report] asks for {report.settings.min_students}).</p>"
        )
    flagged = report.pointed_out
    if not flagged:
        return "<p>No item is pointed out: each separates the students, and none is passed or failed by all.</p>"
    lines = [
        f"<li><strong>{escape(item.item)}</strong>: {escape(item.note)} (facility {_fraction(item.facility)}, "
        f"discrimination {_fraction(item.discrimination)}).</li>"
        for item in flagged
    ]
    return f"<p>{len(flagged)} of {len(report.items)} items to look at again:</p><ul>{''.join(lines)}</ul>"


def _item_row(item: ItemStatistics) -> list[str]:
    return [escape(item.item), number(item.points), _fraction(item.facility), _fraction(item.discrimination)]


def _todo_row(todo: TodoMistakes) -> list[str]:
    named = "; ".join(f"{escape(mistake)} {_share(count, todo.graded)}" for mistake, count in todo.named)
    return [escape(todo.label), named or "none", _share(todo.not_done, todo.graded)]


def section(report: ItemReport | None) -> str:
    if report is None or not report.graded:
        return "<p>No graded student.</p>"
    settings = report.settings
    explained = EXPLAINED.format(
        graded=report.graded,
        passes=f"{settings.everyone_passes:g}",
        fails=f"{settings.everyone_fails:g}",
        low=f"{settings.low_discrimination:g}",
    )
    headings = ["item", "points", "facility", "discrimination"]
    rows = [_item_row(item) for item in report.items]
    items = table(headings, rows, "item-statistics-table", (1, 2, 3), label="Item statistics per item")
    todo_headings = ["TODO", "mistakes named (share of graded students)", "not done"]
    todo_rows = [_todo_row(todo) for todo in report.todos]
    todos = table(todo_headings, todo_rows, "todo-mistakes-table", (2,), label="Mistakes named per TODO")
    return "\n".join(
        [
            explained,
            pointed_out(report),
            "<h3>Per item</h3>",
            items,
            "<h3>Per TODO: the mistakes named</h3>",
            todos,
        ]
    )

"""The class report as one self-contained HTML page: no script, no font, nothing fetched.

A Content-Security-Policy in the page itself forbids every request, so the page opens the
same from a downloaded artifact as from disk. Every text that came from a results folder
(names, errors, feedback) is escaped.
"""

import statistics
from collections import Counter
from html import escape

import autograder
from autograder.classreport import charts, itempage
from autograder.classreport.data import (
    ClassReport,
    Isolations,
    Misconception,
    Noted,
    Share,
    StudentRecord,
    Threshold,
)
from autograder.rubric import percent
from autograder.text import number
from autograder.webpage import document
from autograder.webpage import table as _table

TITLE = f"Class report · {autograder.TITLE}"
NAMES_SHOWN = 12  # students named per misconception before "and N more"
POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
STYLE = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d1d1f;
       max-width: 62rem; margin: 0 auto; padding: 1.5rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; width: 100%; margin: .6rem 0; }
th, td { text-align: left; vertical-align: top; padding: .3rem .5rem; border-bottom: 1px solid #e3e3e3; }
td.number, th.number { text-align: right; white-space: nowrap; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; font-size: .8rem; background: #f5f5f7;
      padding: .4rem; margin: 0; }
svg.chart { max-width: 100%; height: auto; display: block; }
#misconception-table, #integrity-table { min-width: 48rem; }  /* on a phone: scrolled sideways, not squeezed */
figure { margin: .8rem 0; } figcaption { font-size: .85rem; color: #555; }
.muted { color: #666; } .key { font-size: 1.05rem; }
nav ol { columns: 2; }
@media print {
  body { max-width: none; padding: 0; font-size: 11pt; } nav { display: none; }
  h2 { break-after: avoid; } figure, tr, pre { break-inside: avoid; }
  a { color: inherit; text-decoration: none; }
}
"""
SECTIONS = {
    "totals": "Totals",
    "misconceptions": "What to re-teach: the misconceptions",
    "full-marks": "Full marks per TODO and per item",
    "item-statistics": "Item statistics: which items tell you something",
    "thresholds": "Training thresholds",
    "look-at": "Students to look at",
    "integrity": "Look at this code",
    "health": "Grading health",
}


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "–"


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{escape(caption)}</figcaption></figure>"


def totals(report: ClassReport) -> str:
    graded, ungraded, scores = report.graded, report.ungraded, report.totals
    lines = [
        f'<p class="key">{len(report.students)} students: <strong>{len(graded)} graded</strong>, '
        f"<strong>{len(ungraded)} without a grade</strong>.</p>"
    ]
    if not scores:
        return "\n".join([*lines, "<p>No grading to chart.</p>"])
    lines.append(
        f"<p>Total out of {number(report.max_score)}: mean {report.mean:.1f}, median {report.median:g}, "
        f"min {min(scores):g}, max {max(scores):g}.</p>"
    )
    chart = charts.totals_histogram(scores, report.max_score, report.mean or 0.0, report.median or 0.0)
    lines.append(_figure(chart, f"The totals of the {len(graded)} graded students."))
    if ungraded:
        rows = [[escape(one.name), escape(one.error)] for one in ungraded]
        lines += ["<p>Without a grade, and why (details under “Students to look at”):</p>"]
        lines.append(_table(["student", "why"], rows, label="Students without a grade"))
    return "\n".join([*lines, *policies(report)])


def policies(report: ClassReport) -> list[str]:
    """What the course's policies in the rubric did: late penalties, student by student; credit by named mistake."""
    parts = []
    if report.late_policy:
        late = [one for one in report.graded if one.late is not None]
        parts.append(
            f"<p>Late work (the rubric's [late]): {escape(report.late_policy)}. The totals above are after the "
            f"penalty; {len(late)} of {len(report.graded)} graded students had one, or a later commit passed over.</p>"
        )
        rows = [_late_row(one) for one in late]
        headings = ["student", "days late", "raw total", "penalty", "total", "what was applied and why"]
        parts.append(_table(headings, rows, "late-table", (1, 2, 3, 4), label="Late work") if rows else "")
    if report.credit:
        kept = ", ".join(f"{escape(mistake)} keeps {percent(fraction)}" for mistake, fraction in report.credit.items())
        count = sum(share.credited for share in report.items)
        parts.append(
            f"<p>Credit by named mistake (the rubric's [credit]): {kept} of an item's points when its check named "
            f"exactly that mistake. {count} items scored by it, counted apart under “Full marks” (credited).</p>"
        )
    return parts


def _late_row(one: StudentRecord) -> list[str]:
    late = one.late
    if late is None:
        return []
    numbers = [number(late.days_late), number(late.raw_total), number(late.penalty), number(one.total)]
    return [escape(one.name), *numbers, escape(late.note)]


def _names(students: list[str]) -> str:
    shown = ", ".join(students[:NAMES_SHOWN])
    more = f" and {len(students) - NAMES_SHOWN} more" if len(students) > NAMES_SHOWN else ""
    return escape(shown + more)


def _misconception_row(mistake: Misconception, graded: int) -> list[str]:
    what = f"{escape(mistake.explanation)}.<br><span class='muted'>{_names(mistake.students)}</span>"
    count = f"{len(mistake.students)} ({_percent(len(mistake.students), graded)})"
    where = f"<code>{escape(mistake.function)}</code>" if mistake.function else ""
    example = f"<pre>{escape(mistake.example)}</pre>"
    return [f"<strong>{escape(mistake.id)}</strong>", where, count, what, escape(mistake.lesson), example]


def misconceptions(report: ClassReport) -> str:
    if not report.misconceptions:
        return "<p>No catalogue mistake was named for any graded student.</p>"
    intro = (
        f"<p>Each mistake of the catalogue that the grader named for at least one of the {len(report.graded)} "
        "graded students, most students first, with the lesson to reread and one student's feedback.</p>"
    )
    rows = [_misconception_row(mistake, len(report.graded)) for mistake in report.misconceptions]
    headings = ["id", "function", "students", "the mistake", "reread", "example feedback"]
    return intro + _table(headings, rows, "misconception-table", (2,), label="Misconceptions")


def _share_rows(shares: list[Share], credit: bool = False) -> list[list[str]]:
    """label, points, full marks, share (and with the rubric's [credit], how many scored part by it)."""
    return [
        [escape(s.label), number(s.points), f"{s.full}/{s.graded}", _percent(s.full, s.graded)]
        + ([f"{s.credited}/{s.graded}"] if credit else [])
        for s in shares
    ]


def full_marks(report: ClassReport) -> str:
    if not report.graded:
        return "<p>No graded student.</p>"
    labels = [share.label for share in report.todos]
    counts = [f"{share.full}/{share.graded}" for share in report.todos]
    chart = charts.full_marks_bars(labels, [share.fraction for share in report.todos], counts)
    credit = bool(report.credit)
    headings = ["points", "full marks", "share", *(["credited"] if credit else [])]
    columns = (1, 2, 3, 4) if credit else (1, 2, 3)
    todos = _table(
        ["TODO", *headings], _share_rows(report.todos, credit), "todo-table", columns, label="Full marks per TODO"
    )
    items = _table(
        ["item", *headings],
        _share_rows(report.items, credit),
        "item-table",
        columns,
        label="Full marks per rubric item",
    )
    return "\n".join(
        [
            _figure(chart, "Graded students with full marks on every item of a TODO, worst first."),
            "<h3>Per TODO, worst first</h3>",
            todos,
            "<h3>Per rubric item, worst first</h3>",
            items,
        ]
    )


def _threshold(item: Threshold) -> str:
    values = list(item.accuracies.values())
    not_done = f" {len(item.not_done)} not done (the TODO still raises NotImplementedError)." if item.not_done else ""
    why = ", ".join(f"{words} {count}" for words, count in item.why.most_common())
    missing = f" {len(item.without)} without an accuracy ({why})." if item.without else ""
    text = (
        f"<h3>{escape(item.item)}</h3><p>{escape(item.describe)}. Threshold {item.threshold:g}: "
        f"{item.reached} of {len(values)} students reached it.{escape(not_done + missing)}</p>"
    )
    if not values:
        return text
    chart = charts.accuracy_histogram(item.item, values, item.threshold)
    return text + _figure(chart, f"Median accuracy per student on {item.item}, the threshold dashed.")


def thresholds(report: ClassReport) -> str:
    if not report.thresholds:
        return "<p>No threshold item was graded.</p>"
    return "\n".join(_threshold(item) for item in report.thresholds)


def look_at(report: ClassReport) -> str:
    parts = []
    for heading, entries in report.look_at.items():
        parts.append(f"<h3>{escape(heading)} ({len(entries)})</h3>")
        rows = [[escape(entry.student), escape(entry.reason)] for entry in entries]
        parts.append(_table(["student", "what"], rows, label=heading) if rows else "<p class='muted'>None.</p>")
    return "\n".join(parts)


INTEGRITY = (
    "<p>Lines of the students' modules that reach for the grader or the machine, found by reading the code "
    "(none of it run): the grader's runtime or the reference, frames and the call stack, patches of torch, "
    "<code>nn</code>, builtins or the import system, <code>/proc</code>, other processes, the network, files "
    "outside the submission. A note is never a penalty by itself, and no student sees it: read the line, "
    "and the code around it.</p>"
)


def _integrity_rows(one: Noted) -> list[list[str]]:
    student = escape(one.student)
    rows = [
        [student, escape(note.kind.describe), f"<code>{escape(f'{note.module}:{note.line}')}</code>", _pre(note.text)]
        for note in one.notes.notes
    ]
    if one.notes.more:
        rows.append([student, "", "", escape(f"... and {one.notes.more} more notes, not kept")])
    for module, why in one.notes.not_analysed.items():
        rows.append([student, "not analysed", f"<code>{escape(module)}</code>", escape(why)])
    return rows


def _pre(text: str) -> str:
    return f"<pre>{escape(text)}</pre>"


def integrity(report: ClassReport) -> str:
    if not report.noted:
        return INTEGRITY + "<p class='muted'>No note for any student.</p>"
    count = f"<p>{len(report.noted)} of {len(report.students)} students have notes.</p>"
    rows = [row for one in report.noted for row in _integrity_rows(one)]
    return (
        INTEGRITY
        + count
        + _table(["student", "what", "where", "the line"], rows, "integrity-table", label="Notes on the code")
    )


def _counted(counter: Counter, recorded: int) -> str:
    """'uid 61000-64999 (6 of 6); landlock abi 7 (5 of 6)', most common first."""
    return "; ".join(f"{escape(value)} ({count} of {recorded})" for value, count in counter.most_common())


def isolation(state: Isolations) -> list[str]:
    """The isolation the gradings recorded, in words: layers and protections in force, how many each; failures."""
    if not state.recorded:
        return ["<p>No grading recorded its isolation.</p>"]
    parts = [
        f"<p>{state.recorded} gradings recorded their isolation; how many of them had each:</p><ul>",
        f"<li>Layers in force: {_counted(state.layers, state.recorded) or 'none (interpreter-level only)'}.</li>",
        f"<li>Protections in force: {_counted(state.protections, state.recorded) or 'none'}.</li>",
    ]
    if state.failures:
        parts.append(f"<li>Layers that failed to start, and why: {_counted(state.failures, state.recorded)}.</li>")
    if state.not_required:
        parts.append(f"<li>{state.not_required} graded with isolation not required (--no-require-isolation).</li>")
    return [*parts, "</ul>"]


def health(report: ClassReport) -> str:
    state = report.health
    parts = [f'<p class="warning">⚠ {escape(state.graders)}</p>'] if state.graders else []
    if state.seconds:
        ordered = sorted(state.seconds)
        middle = statistics.median(ordered)
        slowest = ", ".join(f"{escape(one.student)} {one.seconds:.1f} s" for one in state.slowest)
        parts.append(
            f"<p>Time per grading: min {ordered[0]:.1f} s, median {middle:.1f} s, max {ordered[-1]:.1f} s "
            f"({len(ordered)} gradings). Slowest: {slowest}.</p>"
        )
    rows = [[escape(key), _versions(counter)] for key, counter in state.versions.items()]
    parts.append(
        _table(["recorded", "values (gradings)"], rows, "version-table", label="Versions recorded") if rows else ""
    )
    parts.append("<h3>Isolation</h3>")
    parts += isolation(state.isolation)
    return "\n".join(parts)


def _versions(counter: Counter) -> str:
    return "; ".join(f"{escape(value)} ({count})" for value, count in counter.most_common())


RENDERERS = {
    "totals": totals,
    "misconceptions": misconceptions,
    "full-marks": full_marks,
    "item-statistics": lambda report: itempage.section(report.statistics),
    "thresholds": thresholds,
    "look-at": look_at,
    "integrity": integrity,
    "health": health,
}


def similarity(href: str) -> str:
    """The line that links to the similarity page (`href`, relative to this one); '' without one."""
    if not href:
        return ""
    return (
        f'<p id="similarity-link">Who wrote alike: <a href="{escape(href)}">the similarity page</a>, pairs of '
        "students whose code to look at side by side (nothing there changes a grade).</p>"
    )


def page(report: ClassReport, source: str, similarity_href: str = "") -> str:
    """The whole page; `source` says where the gradings came from (shown under the title), `similarity_href`
    the similarity page's address when there is one."""
    header = (
        f'<p class="muted">From the gradings in {escape(source)}: {len(report.students)} students, '
        f"{len(report.items)} rubric items.</p>{similarity(similarity_href)}"
    )
    sections = {key: (title, RENDERERS[key](report)) for key, title in SECTIONS.items()}
    return document(TITLE, POLICY, STYLE, header, sections)

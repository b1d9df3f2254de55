"""The class report's charts, drawn by matplotlib and returned as inline SVG (text as paths: no fonts).

Each function takes plain numbers and returns one `<svg>` element. Figures are built without
pyplot (no GUI backend, nothing global), and each SVG's ids are prefixed with the chart's
name, so several can share one page.
"""

import io
import re
from html import escape

from matplotlib import rc_context
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

STYLE = {
    "svg.fonttype": "path",  # glyphs drawn as paths: the page needs no font
    "svg.hashsalt": "class-report",  # the same data gives the same SVG
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
BAR, LINE, MARK = "#4c72b0", "#c44e52", "#55a868"


def _svg(figure: Figure, name: str, label: str) -> str:
    buffer = io.StringIO()
    with rc_context(STYLE):
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r'\bid="([^"]+)"', rf'id="{name}-\1"', text)
    text = re.sub(r'(href="#|url\(#)([^")]+)', rf"\g<1>{name}-\g<2>", text)
    return text.replace("<svg ", f'<svg role="img" aria-label="{escape(label)}" class="chart" ', 1)


def _figure(width: float, height: float) -> Figure:
    with rc_context(STYLE):
        return Figure(figsize=(width, height), layout="constrained")


def totals_histogram(totals: list[float], max_score: float, mean: float, median: float) -> str:
    """How many students got each total, with the mean and the median marked."""
    with rc_context(STYLE):
        figure = _figure(6.4, 2.8)
        axes = figure.subplots()
        step = max_score / 20
        axes.hist(totals, bins=[step * k for k in range(21)], color=BAR, edgecolor="white")
        axes.axvline(mean, color=LINE, linestyle="--", label=f"mean {mean:.1f}")
        axes.axvline(median, color=MARK, linestyle=":", linewidth=2, label=f"median {median:g}")
        axes.set(xlim=(0, max_score), xlabel=f"total (out of {max_score:g})", ylabel="students")
        axes.yaxis.set_major_locator(MaxNLocator(integer=True))
        axes.legend(frameon=False, loc="upper left")
    return _svg(figure, "totals", f"Histogram of the totals of {len(totals)} graded students")


def full_marks_bars(labels: list[str], fractions: list[float], counts: list[str]) -> str:
    """One bar per TODO: the share of graded students with full marks, in the order given (worst first)."""
    with rc_context(STYLE):
        figure = _figure(6.4, 0.32 * len(labels) + 0.8)
        axes = figure.subplots()
        rows = range(len(labels))
        axes.barh(rows, [100 * f for f in fractions], color=BAR)
        for row, fraction, count in zip(rows, fractions, counts, strict=True):
            axes.text(100 * fraction + 1, row, count, va="center", fontsize=8)
        axes.set_yticks(list(rows), labels)
        axes.invert_yaxis()
        axes.set(xlim=(0, 112), xlabel="% of graded students with full marks")
    return _svg(figure, "todos", "Share of graded students with full marks on each TODO")


def accuracy_histogram(name: str, accuracies: list[float], threshold: float) -> str:
    """The accuracies the class's code reached on one threshold item, against the threshold line."""
    with rc_context(STYLE):
        figure = _figure(6.4, 2.4)
        axes = figure.subplots()
        axes.hist(accuracies, bins=[k / 40 for k in range(41)], color=BAR, edgecolor="white")
        axes.axvline(threshold, color=LINE, linestyle="--", label=f"threshold {threshold:g}")
        axes.set(xlim=(0, 1), xlabel="median accuracy over the grader's seeds", ylabel="students")
        axes.yaxis.set_major_locator(MaxNLocator(integer=True))
        axes.legend(frameon=False, loc="upper left")
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return _svg(figure, f"threshold-{slug}", f"Histogram of the accuracies reached on {name}")

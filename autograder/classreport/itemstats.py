"""The class report's item statistics: per item its facility and discrimination, per TODO the share of each
mistake named, and the items worth a second look, said in words.

Facility is the mean fraction of an item's points over the graded students; discrimination the
correlation of the item's score with the rest of the total (the corrected item-total correlation, as
PrairieLearn and Moodle compute it: the item is left out of the total it is compared with, so that it
does not correlate with itself). When an item is pointed out is the rubric's ([report]), never a figure
here; plain records only, drawn by `page` and `summary`.
"""

import statistics
from dataclasses import dataclass

from autograder.classreport.records import StudentRecord, failure, score, tags, todo_labels
from autograder.grading.results import Failure
from autograder.rubric import Report, Rubric

EVERYONE_PASSES = "everyone, or nearly, passes it: it tells you little about who knows the week"
EVERYONE_FAILS = "everyone, or nearly, fails it: look at the item, and at how its TODO was taught"
LOW = "this item does not separate students who know the week from those who do not"


@dataclass(frozen=True)
class ItemStatistics:
    item: str
    points: float
    facility: float | None  # the mean fraction of its points (None: no graded student, or an item of no points)
    discrimination: float | None  # corrected item-total correlation (None: the item or the rest does not vary)
    note: str = ""  # why it is pointed out, in words; "" when it is not


@dataclass(frozen=True)
class TodoMistakes:
    """What the graded students' code was told on one TODO's items: each mistake named, and "not done"."""

    label: str  # "TODO 4 · gather-at-final-index"
    graded: int
    named: tuple[tuple[str, int], ...]  # (catalogue id, students it was named for on this TODO), most first
    not_done: int  # students whose TODO still raised NotImplementedError

    def share(self, count: int) -> float:
        return count / self.graded if self.graded else 0.0


@dataclass(frozen=True)
class ItemReport:
    items: tuple[ItemStatistics, ...]  # in the rubric's order
    todos: tuple[TodoMistakes, ...]  # in the rubric's order
    graded: int
    settings: Report  # the rubric's [report]: what "low" and "everyone" mean here

    @property
    def judged(self) -> bool:
        """Whether there are students enough to point any item out."""
        return self.graded >= self.settings.min_students

    @property
    def pointed_out(self) -> list[ItemStatistics]:
        return [item for item in self.items if item.note]


def correlation(xs: list[float], ys: list[float]) -> float | None:
    """Pearson's r of two paired lists; None when there are fewer than two pairs or either side is constant."""
    if len(xs) < 2:
        return None
    try:
        return statistics.correlation(xs, ys)
    except statistics.StatisticsError:  # a constant side: no correlation to speak of
        return None


def note(facility: float | None, discrimination: float | None, settings: Report) -> str:
    """Why an item is pointed out ("" when it is not): everyone passes, everyone fails, or it does not separate."""
    if facility is None:
        return ""
    if facility >= settings.everyone_passes:
        return EVERYONE_PASSES
    if facility <= settings.everyone_fails:
        return EVERYONE_FAILS
    if discrimination is None or discrimination < settings.low_discrimination:
        return LOW
    return ""


def item_statistics(graded: list[StudentRecord], rubric: Rubric) -> tuple[ItemStatistics, ...]:
    """Facility and discrimination of each item over the graded students, each pointed out or not."""
    scores = {item.name: [score(one.tests.get(item.name)) for one in graded] for item in rubric.items}
    totals = [sum(column[index] for column in scores.values()) for index in range(len(graded))]
    judged = len(graded) >= rubric.report.min_students
    found = []
    for item in rubric.items:
        own = scores[item.name]
        facility = statistics.mean(value / item.points for value in own) if own and item.points else None
        rest = [total - value for total, value in zip(totals, own, strict=True)]
        discrimination = correlation(own, rest)
        why = note(facility, discrimination, rubric.report) if judged else ""
        found.append(ItemStatistics(item.name, item.points, facility, discrimination, why))
    return tuple(found)


def todo_mistakes(graded: list[StudentRecord], rubric: Rubric) -> tuple[TodoMistakes, ...]:
    """Per TODO, how many graded students each catalogue mistake was named for on its items, and how many left
    it not done (each student counted once per mistake and TODO)."""
    labels = todo_labels()
    found = []
    for function in rubric.functions:
        names = [item.name for item in rubric.items if item.function == function]
        counts: dict[str, int] = {}
        not_done = 0
        for one in graded:
            records = [one.tests.get(name) or {} for name in names]
            for mistake in dict.fromkeys(mistake for record in records for mistake in tags(record)):
                counts[mistake] = counts.get(mistake, 0) + 1
            not_done += any(failure(record) == Failure.NOT_DONE for record in records)
        named = tuple(sorted(counts.items(), key=lambda pair: (-pair[1], pair[0])))
        found.append(TodoMistakes(labels.get(function, function), len(graded), named, not_done))
    return tuple(found)


def build(graded: list[StudentRecord], rubric: Rubric) -> ItemReport:
    """The item statistics of the graded students, by the rubric's items and its [report] settings."""
    return ItemReport(item_statistics(graded, rubric), todo_mistakes(graded, rubric), len(graded), rubric.report)

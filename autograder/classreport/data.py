"""What the class report shows, computed from a roster's gradings: plain records, no drawing.

Everything comes from the structured parts of each results.json (scores, a test's `tags` and
`extra_data`, the grading's `extra_data`), never from feedback text, and from the gradebook's
reading of the folders (who was graded, who was not and why).
"""

import json
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from autograder import integrity, stubs
from autograder.checks.catalogue import CATALOGUE, MISTAKES
from autograder.fingerprint import SHORT, recorded
from autograder.grading.results import Failure
from autograder.roster.gradebook import Entry, collect, late_note, mixed_graders
from autograder.rubric import Rubric, late_policy

# item failures that say the grading of the item went wrong, not the answer
TROUBLE = {
    Failure.TIMEOUT: "timed out",
    Failure.CRASH: "crashed",
    Failure.EXIT: "exited the process",
    Failure.OUT_OF_MEMORY: "ran out of memory",
    Failure.DISK_FULL: "filled its disk",
    Failure.GRADER_ERROR: "grader error",
    Failure.NOT_STARTED: "worker did not start",
    Failure.NOT_RUN: "did not run",
}
EXAMPLE_LINES = 8  # lines of feedback shown as a mistake's example


@dataclass
class StudentRecord:
    name: str
    total: float | None  # None: no grade (see error)
    error: str
    tests: dict[str, dict]  # item name -> its test record in results.json
    seconds: float | None  # the grading's execution_time
    environment: dict  # the grading's extra_data
    late: "LateWork | None" = None  # what the rubric's [late] did to the total


@dataclass
class Share:
    """How many graded students have full marks on a TODO or an item."""

    label: str
    points: float
    full: int
    graded: int
    credited: int = 0  # graded students who scored part of it by the rubric's [credit] (not full marks)

    @property
    def fraction(self) -> float:
        return self.full / self.graded if self.graded else 0.0


@dataclass
class Misconception:
    id: str
    function: str
    explanation: str
    lesson: str
    students: list[str]
    example: str  # one student's feedback naming it (the shortest), a few lines


@dataclass
class Threshold:
    item: str
    describe: str
    threshold: float
    accuracies: dict[str, float]  # student -> median accuracy reached
    without: list[str]  # graded students whose training gave no accuracy (it crashed, timed out, ...)

    @property
    def reached(self) -> int:
        return sum(value >= self.threshold for value in self.accuracies.values())


@dataclass
class LateWork:
    """What the rubric's [late] did to one student's total, and why (the gradebook's words)."""

    days_late: int
    raw_total: float
    penalty: float
    note: str


@dataclass
class LookAt:
    student: str
    reason: str


@dataclass
class Noted:
    """One student's integrity notes (integrity.json): lines of code to read, never a penalty by themselves."""

    student: str
    notes: integrity.Notes


class Timed(NamedTuple):
    student: str
    seconds: float


@dataclass
class Health:
    seconds: list[float]  # execution time of each grading that recorded one
    slowest: list[Timed]  # the three slowest gradings
    versions: dict[str, Counter]  # "grader_version" -> Counter of values
    isolation: dict[str, Counter]  # an isolation key -> Counter of its values, across gradings
    graders: str = ""  # the warning when the graded students were graded by different graders (fingerprints)


@dataclass
class ClassReport:
    max_score: float
    students: list[StudentRecord]
    todos: list[Share]  # worst first
    items: list[Share]  # worst first
    misconceptions: list[Misconception]  # most students first
    thresholds: list[Threshold]
    look_at: dict[str, list[LookAt]]  # heading -> students
    health: Health
    late_policy: str = ""  # the rubric's [late] in a sentence; "" without one
    credit: dict[str, float] | None = None  # the rubric's [credit]: catalogue id -> fraction kept
    noted: list[Noted] = field(default_factory=list)  # students whose code has integrity notes, in roster order

    @property
    def graded(self) -> list[StudentRecord]:
        return [student for student in self.students if student.total is not None]

    @property
    def ungraded(self) -> list[StudentRecord]:
        return [student for student in self.students if student.total is None]

    @property
    def totals(self) -> list[float]:
        return [student.total for student in self.graded if student.total is not None]

    @property
    def mean(self) -> float | None:
        return statistics.mean(self.totals) if self.totals else None

    @property
    def median(self) -> float | None:
        return statistics.median(self.totals) if self.totals else None


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _numeric(value: object) -> float | None:
    """A value read from results.json as a number; None when it is not one."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def record(entry: Entry, rubric: Rubric | None = None) -> StudentRecord:
    """One student's grading as the report reads it: only the structured parts of results.json."""
    tests = entry.document.get("tests") if isinstance(entry.document.get("tests"), list) else []
    records = {str(test.get("name")): test for test in tests if isinstance(test, dict)}
    seconds = _numeric(entry.document.get("execution_time"))
    environment = _dict(entry.document.get("extra_data"))
    return StudentRecord(
        entry.student, entry.total, entry.error, records, seconds, environment, _late_work(entry, rubric)
    )


def _late_work(entry: Entry, rubric: Rubric | None) -> LateWork | None:
    note = late_note(entry, rubric.late if rubric else None)
    if not note or entry.raw_total is None:
        return None
    return LateWork(entry.days_late or 0, entry.raw_total, entry.penalty or 0.0, note)


def score(record: dict | None) -> float:
    return _numeric((record or {}).get("score")) or 0.0


def failure(record: dict | None) -> str:
    return str(_dict((record or {}).get("extra_data")).get("failure", ""))


def credited(record: dict | None) -> bool:
    """Whether the item scored by the rubric's [credit] (its extra_data keeps the credit and the raw score)."""
    return isinstance(_dict((record or {}).get("extra_data")).get("credit"), dict)


def tags(record: dict) -> list[str]:
    found = record.get("tags")
    return [str(tag) for tag in found] if isinstance(found, list) else []


def todo_labels() -> dict[str, str]:
    """Graded function -> "TODO 4 · gather-at-final-index", from the solutions' markers."""
    return {todo.function.split(".")[0]: todo.label for todo in stubs.todos()}


def shares(graded: list[StudentRecord], rubric: Rubric) -> tuple[list[Share], list[Share]]:
    """Full marks per TODO (every item of its function) and per item, worst first."""
    labels = todo_labels()
    items = [
        Share(
            item.name,
            item.points,
            sum(score(s.tests.get(item.name)) >= item.points for s in graded),
            len(graded),
            sum(credited(s.tests.get(item.name)) for s in graded),
        )
        for item in rubric.items
    ]
    todos = []
    for function in rubric.functions:
        own = [item for item in rubric.items if item.function == function]
        full = sum(all(score(s.tests.get(item.name)) >= item.points for item in own) for s in graded)
        some = sum(any(credited(s.tests.get(item.name)) for item in own) for s in graded)
        todos.append(Share(labels.get(function, function), sum(item.points for item in own), full, len(graded), some))
    return sorted(todos, key=lambda share: share.fraction), sorted(items, key=lambda share: share.fraction)


def misconceptions(graded: list[StudentRecord]) -> list[Misconception]:
    """Each catalogue id named for at least one graded student: how many students, most first."""
    named: dict[str, list[str]] = {}
    examples: dict[str, str] = {}
    for one in graded:
        for record in one.tests.values():
            output = str(record.get("output", ""))
            for mistake in tags(record):
                if one.name not in named.setdefault(mistake, []):
                    named[mistake].append(one.name)
                if mistake not in examples or output.count("\n") < examples[mistake].count("\n"):
                    examples[mistake] = output
    order = {mistake.id: index for index, mistake in enumerate(MISTAKES)}
    found = []
    for mistake, students in named.items():
        known = CATALOGUE.get(mistake)
        example = "\n".join(examples[mistake].splitlines()[:EXAMPLE_LINES])
        if known is None:
            found.append(Misconception(mistake, "", "(not in this grader's catalogue)", "", students, example))
        else:
            where = ", ".join(known.functions)  # S5 is made in next_token_loss and in train_step
            found.append(Misconception(mistake, where, known.explanation, known.lesson, students, example))
    return sorted(found, key=lambda m: (-len(m.students), order.get(m.id, len(order)), m.id))


def thresholds(graded: list[StudentRecord], rubric: Rubric) -> list[Threshold]:
    """The accuracy each graded student's code reached on each threshold item."""
    found = []
    for item in rubric.items:
        recipe = rubric.recipe(item.function, item.aspect)
        if recipe is None:
            continue
        reached, without = {}, []
        for one in graded:
            accuracy = _numeric(_dict(one.tests.get(item.name, {}).get("extra_data")).get("accuracy"))
            if accuracy is None:
                without.append(one.name)
            else:
                reached[one.name] = accuracy
        found.append(Threshold(item.name, recipe.describe, recipe.threshold, reached, without))
    return found


def _zero_todos(one: StudentRecord, rubric: Rubric, labels: dict[str, str]) -> list[str]:
    zeros = []
    for function in rubric.functions:
        own = [item for item in rubric.items if item.function == function]
        if all(score(one.tests.get(item.name)) == 0 for item in own):
            kinds = sorted({failure(one.tests.get(item.name)) for item in own} - {""})
            zeros.append(labels.get(function, function) + (f" ({', '.join(kinds)})" if kinds else ""))
    return zeros


def look_at(students: list[StudentRecord], rubric: Rubric) -> dict[str, list[LookAt]]:
    """Students to follow up: no grade, an item that timed out, crashed or erred, 0 on a whole TODO."""
    labels = todo_labels()
    trouble, zeros = [], []
    for one in students:
        if one.total is None:
            continue
        for item in rubric.items:
            kind = failure(one.tests.get(item.name))
            if kind in TROUBLE:
                trouble.append(LookAt(one.name, f"{item.name}: {TROUBLE[kind]}"))
        zeros += [LookAt(one.name, f"0 on {todo}") for todo in _zero_todos(one, rubric, labels)]
    return {
        "Without a grade": [LookAt(one.name, one.error) for one in students if one.total is None],
        "Timed out, crashed or erred": trouble,
        "0 on a whole TODO": zeros,
    }


def _flatten(values: dict, prefix: str = "") -> dict[str, str]:
    flat = {}
    for key, value in values.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value if isinstance(value, str) else json.dumps(value)
    return flat


def health(students: list[StudentRecord]) -> Health:
    """Time per grading, the versions and the isolation each grading recorded."""
    timed = [Timed(one.name, one.seconds) for one in students if one.seconds is not None]
    versions: dict[str, Counter] = {}
    isolation: dict[str, Counter] = {}
    for one in students:
        for key in ("grader_version", "torch_version", "python_version"):
            if key in one.environment:
                versions.setdefault(key, Counter())[str(one.environment[key])] += 1
        if one.environment:  # a grading's record: the grader that made it, in short
            stamp = recorded({"extra_data": one.environment})[:SHORT]
            versions.setdefault("fingerprint", Counter())[stamp or "none recorded"] += 1
        for key, value in _flatten(_dict(one.environment.get("isolation"))).items():
            isolation.setdefault(key, Counter())[value] += 1
    slowest = sorted(timed, key=lambda one: -one.seconds)[:3]
    graders = mixed_graders([recorded({"extra_data": one.environment}) for one in students if one.total is not None])
    return Health([one.seconds for one in timed], slowest, versions, isolation, graders)


def noted(entries: list[Entry]) -> list[Noted]:
    """The integrity notes of each student's grading (its integrity.json): those with a note, or a module not read."""
    found = []
    for entry in entries:
        notes = integrity.read(entry.folder / integrity.FILE) if entry.folder else integrity.Notes()
        if notes.notes or notes.more or notes.not_analysed:
            found.append(Noted(entry.student, notes))
    return found


def build(results: Path, rubric: Rubric, roster: list[str] | None = None) -> ClassReport:
    """The class report's data for the gradings under `results` (one folder per student)."""
    entries = collect(results, rubric, roster)
    students = [record(entry, rubric) for entry in entries]
    graded = [one for one in students if one.total is not None]
    todos, items = shares(graded, rubric)
    return ClassReport(
        max_score=rubric.total,
        students=students,
        todos=todos,
        items=items,
        misconceptions=misconceptions(graded),
        thresholds=thresholds(graded, rubric),
        look_at=look_at(students, rubric),
        health=health(students),
        late_policy=late_policy(rubric.late) if rubric.late else "",
        credit=dict(rubric.credit.fractions) or None,
        noted=noted(entries),
    )

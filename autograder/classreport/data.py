"""What the class report shows, computed from a roster's gradings: plain records, no drawing.

Everything comes from the structured parts of each results.json (scores, a test's `tags` and
`extra_data`, the grading's `extra_data`), never from feedback text, and from the gradebook's
reading of the folders (who was graded, who was not and why).
"""

import json
import statistics
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from autograder import stubs
from autograder.catalogue import CATALOGUE, MISTAKES
from autograder.gradebook import Entry, collect
from autograder.rubric import Rubric

# item failures that say the grading of the item went wrong, not the answer (plugin.failure_kind)
TROUBLE = {
    "timeout": "timed out",
    "crash": "crashed",
    "exit": "exited the process",
    "out of memory": "ran out of memory",
    "grader error": "grader error",
    "not run": "did not run",
}
EXAMPLE_LINES = 8  # lines of feedback shown as a mistake's example


@dataclass
class Student:
    name: str
    total: float | None  # None: no grade (see error)
    error: str
    tests: dict[str, dict]  # item name -> its test record in results.json
    seconds: float | None  # the grading's execution_time
    environment: dict  # the grading's extra_data


@dataclass
class Share:
    """How many graded students have full marks on a TODO or an item."""

    label: str
    points: float
    full: int
    graded: int

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
class LookAt:
    student: str
    reason: str


@dataclass
class Health:
    seconds: list[float]  # execution time of each grading that recorded one
    slowest: list[tuple[str, float]]
    versions: dict[str, Counter]  # "grader_version" -> Counter of values
    isolation: dict[str, Counter]  # an isolation key -> Counter of its values, across gradings


@dataclass
class ClassReport:
    max_score: float
    students: list[Student]
    todos: list[Share]  # worst first
    items: list[Share]  # worst first
    misconceptions: list[Misconception]  # most students first
    thresholds: list[Threshold]
    look_at: dict[str, list[LookAt]]  # heading -> students
    health: Health

    @property
    def graded(self) -> list[Student]:
        return [student for student in self.students if student.total is not None]

    @property
    def ungraded(self) -> list[Student]:
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


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def student(entry: Entry) -> Student:
    tests = entry.document.get("tests") if isinstance(entry.document.get("tests"), list) else []
    records = {str(test.get("name")): test for test in tests if isinstance(test, dict)}
    seconds = _number(entry.document.get("execution_time"))
    return Student(entry.student, entry.total, entry.error, records, seconds, _dict(entry.document.get("extra_data")))


def score(record: dict | None) -> float:
    return _number((record or {}).get("score")) or 0.0


def failure(record: dict | None) -> str:
    return str(_dict((record or {}).get("extra_data")).get("failure", ""))


def tags(record: dict) -> list[str]:
    found = record.get("tags")
    return [str(tag) for tag in found] if isinstance(found, list) else []


def todo_labels() -> dict[str, str]:
    """Graded function -> "TODO 4 · gather-at-final-index", from the solutions' markers."""
    return {todo.function.split(".")[0]: todo.label for todo in stubs.todos()}


def shares(graded: list[Student], rubric: Rubric) -> tuple[list[Share], list[Share]]:
    """Full marks per TODO (every item of its function) and per item, worst first."""
    labels = todo_labels()
    items = [
        Share(item.name, item.points, sum(score(s.tests.get(item.name)) >= item.points for s in graded), len(graded))
        for item in rubric.items
    ]
    todos = []
    for function in rubric.functions:
        own = [item for item in rubric.items if item.function == function]
        full = sum(all(score(s.tests.get(item.name)) >= item.points for item in own) for s in graded)
        todos.append(Share(labels.get(function, function), sum(item.points for item in own), full, len(graded)))
    return sorted(todos, key=lambda share: share.fraction), sorted(items, key=lambda share: share.fraction)


def misconceptions(graded: list[Student]) -> list[Misconception]:
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


def thresholds(graded: list[Student], rubric: Rubric) -> list[Threshold]:
    """The accuracy each graded student's code reached on each threshold item."""
    found = []
    for item in rubric.items:
        settings = rubric.thresholds.get(item.function, {}).get(item.aspect)
        if settings is None:
            continue
        reached, without = {}, []
        for one in graded:
            accuracy = _number(_dict(one.tests.get(item.name, {}).get("extra_data")).get("accuracy"))
            if accuracy is None:
                without.append(one.name)
            else:
                reached[one.name] = accuracy
        found.append(Threshold(item.name, settings.get("describe", item.name), settings["threshold"], reached, without))
    return found


def _zero_todos(one: Student, rubric: Rubric, labels: dict[str, str]) -> list[str]:
    zeros = []
    for function in rubric.functions:
        own = [item for item in rubric.items if item.function == function]
        if all(score(one.tests.get(item.name)) == 0 for item in own):
            kinds = sorted({failure(one.tests.get(item.name)) for item in own} - {""})
            zeros.append(labels.get(function, function) + (f" ({', '.join(kinds)})" if kinds else ""))
    return zeros


def look_at(students: list[Student], rubric: Rubric) -> dict[str, list[LookAt]]:
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


def health(students: list[Student]) -> Health:
    """Time per grading, the versions and the isolation each grading recorded."""
    timed = [(one.name, one.seconds) for one in students if one.seconds is not None]
    versions: dict[str, Counter] = {}
    isolation: dict[str, Counter] = {}
    for one in students:
        for key in ("grader_version", "torch_version", "python_version"):
            if key in one.environment:
                versions.setdefault(key, Counter())[str(one.environment[key])] += 1
        for key, value in _flatten(_dict(one.environment.get("isolation"))).items():
            isolation.setdefault(key, Counter())[value] += 1
    slowest = sorted(timed, key=lambda pair: -pair[1])[:3]
    return Health([seconds for _, seconds in timed], slowest, versions, isolation)


def build(results: Path, rubric: Rubric, roster: list[str] | None = None) -> ClassReport:
    """The class report's data for the gradings under `results` (one folder per student)."""
    students = [student(entry) for entry in collect(results, rubric, roster)]
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
    )

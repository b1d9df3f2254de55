"""What the class report shows, computed from a roster's gradings: plain records, no drawing.

Everything comes from the structured parts of each results.json (scores, a test's `tags` and
`extra_data`, the grading's `extra_data`), never from feedback text, and from the gradebook's
reading of the folders (who was graded, who was not and why).
"""

import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from autograder import integrity
from autograder.checks.catalogue import CATALOGUE, MISTAKES
from autograder.classreport import itemstats
from autograder.classreport.records import (
    LateWork,
    StudentRecord,
    credited,
    failure,
    mapping,
    numeric,
    score,
    tags,
    todo_labels,
)
from autograder.fingerprint import SHORT, recorded
from autograder.grading.results import Failure
from autograder.roster.gradebook import Entry, collect, late_note, mixed_graders
from autograder.rubric import Rubric, late_policy
from autograder.sandbox import record as sandbox_record

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
# the protections a grading records (sandbox/record.py's names), in words, in the order the health section names them
PROTECTIONS = {
    "separate_user": "a user of its own",
    "hidden_instructor_files": "the instructor's files hidden",
    "no_network": "no network",
    "no_process_outlives": "no process outlives the grading",
    "others_out_of_reach": "other processes out of reach",
    "private_tmp": "a private /tmp",
    "own_pid_namespace": "its own process ids",
    "fair_cpu": "a fair share of the CPU",
}


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
    not_done: list[str] = field(default_factory=list)  # graded students whose TODO still raises NotImplementedError
    why: Counter[str] = field(default_factory=Counter)  # what the failures of `without` were, in words -> students

    @property
    def reached(self) -> int:
        return sum(value >= self.threshold for value in self.accuracies.values())


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
class Isolations:
    """The isolation the gradings recorded, counted in words: how many gradings each layer, protection and
    failure; read through the sandbox's own record (its data, never its summary line)."""

    recorded: int = 0  # gradings that recorded their isolation
    layers: Counter[str] = field(default_factory=Counter)  # a layer in force, as people read it ("landlock abi 7")
    protections: Counter[str] = field(default_factory=Counter)  # a protection in force ("no network")
    failures: Counter[str] = field(default_factory=Counter)  # a layer that did not start, and why
    not_required: int = 0  # gradings run with --no-require-isolation


@dataclass
class Health:
    seconds: list[float]  # execution time of each grading that recorded one
    slowest: list[Timed]  # the three slowest gradings
    versions: dict[str, Counter]  # "grader_version" -> Counter of values
    isolation: "Isolations"  # the layers and protections in force, and the failures, across gradings
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
    statistics: itemstats.ItemReport | None = None  # facility and discrimination per item, mistakes per TODO

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


def record(entry: Entry, rubric: Rubric | None = None) -> StudentRecord:
    """One student's grading as the report reads it: only the structured parts of results.json."""
    tests = entry.document.get("tests") if isinstance(entry.document.get("tests"), list) else []
    records = {str(test.get("name")): test for test in tests if isinstance(test, dict)}
    seconds = numeric(entry.document.get("execution_time"))
    environment = mapping(entry.document.get("extra_data"))
    return StudentRecord(
        entry.student, entry.total, entry.error, records, seconds, environment, _late_work(entry, rubric)
    )


def _late_work(entry: Entry, rubric: Rubric | None) -> LateWork | None:
    note = late_note(entry, rubric.late if rubric else None)
    if not note or entry.raw_total is None:
        return None
    return LateWork(entry.days_late or 0, entry.raw_total, entry.penalty or 0.0, note)


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
        found.append(Threshold(item.name, recipe.describe, recipe.threshold, {}, []))
        for one in graded:
            _reached(found[-1], one)
    return found


def _reached(threshold: Threshold, one: StudentRecord) -> None:
    """One student's accuracy on a threshold item; else why there is none: not done, or what went wrong."""
    record = one.tests.get(threshold.item, {})
    accuracy = numeric(mapping(record.get("extra_data")).get("accuracy"))
    kind = failure(record)
    if accuracy is not None:
        threshold.accuracies[one.name] = accuracy
    elif kind == Failure.NOT_DONE:
        threshold.not_done.append(one.name)
    else:
        threshold.without.append(one.name)
        threshold.why[TROUBLE.get(kind, kind or "no failure recorded")] += 1  # the words of TROUBLE, else its own


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


def isolations(students: list[StudentRecord]) -> Isolations:
    """The isolation of each grading that recorded one, counted: layers, protections, failures."""
    found = Isolations()
    for one in students:
        data = one.environment.get("isolation")
        if not isinstance(data, dict):
            continue
        try:
            isolation = sandbox_record.from_dict(data)
        except (TypeError, ValueError, KeyError):  # a record this grader cannot read: counted, not trusted
            isolation = sandbox_record.Isolation()
        found.recorded += 1
        found.layers.update(isolation.in_force())
        found.protections.update(words for name, words in PROTECTIONS.items() if getattr(isolation, name, False))
        found.failures.update(str(failure) for failure in isolation.failures)
        found.not_required += one.environment.get("isolation_required") is False
    return found


def health(students: list[StudentRecord]) -> Health:
    """Time per grading, the versions and the isolation each grading recorded."""
    timed = [Timed(one.name, one.seconds) for one in students if one.seconds is not None]
    versions: dict[str, Counter] = {}
    for one in students:
        for key in ("grader_version", "torch_version", "python_version"):
            if key in one.environment:
                versions.setdefault(key, Counter())[str(one.environment[key])] += 1
        if one.environment:  # a grading's record: the grader that made it, in short
            stamp = recorded({"extra_data": one.environment})[:SHORT]
            versions.setdefault("fingerprint", Counter())[stamp or "none recorded"] += 1
    slowest = sorted(timed, key=lambda one: -one.seconds)[:3]
    graders = mixed_graders([recorded({"extra_data": one.environment}) for one in students if one.total is not None])
    return Health([one.seconds for one in timed], slowest, versions, isolations(students), graders)


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
        statistics=itemstats.build(graded, rubric),
    )

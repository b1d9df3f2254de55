"""The rubric: points per item, the threshold items' recipes and the grader's limits, read once from a TOML file.

`load(path)` reads a rubric file (the grader's own `rubric.toml` when no path is given) into a
`Rubric` and checks it as it reads; the [points] and [thresholds] a file leaves out are the exercises'
records' (autograder/todos/), written into the rubric's text, so that the text a grading records is the
whole rubric it was graded by; whoever needs the rubric is handed that `Rubric`, never the file.
Each section of the file is one record: `[points.F]` an `Item` per aspect, `[thresholds.F.A]` a
`Recipe`, `[limits]` the `Limits`, and the course's policies: `[late]` the `Late` work policy,
`[credit]` the `Credit` kept for a named mistake; `[report]` when the class report's item statistics
point an item out (`Report`). Every item must have its hidden test and every
hidden test its item, whichever file is read; the file states its `total` at the top, and the points
must add up to it (a typo such as `output = 50` is refused, not graded). Standard library only: the
roster workflow's jobs import it bare, and `autograde rubric check FILE` (or, with nothing installed,
`python -m autograder.rubric FILE`) checks a file and says what it sets.
"""

import json
import math
import sys
import tomllib
from dataclasses import dataclass, field, fields, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from autograder import todos
from autograder.checks import catalogue
from autograder.locations import RUBRIC
from autograder.runtime.bounds import Bounds

SECTIONS = ("points", "thresholds", "limits", "late", "credit", "report")  # the tables a rubric file may hold
SETTINGS = ("total",)  # the keys at the top of a rubric file, before any table
KEEP = ("latest", "better")  # [late] keep: which commits are graded, and which counts
LATE_KEYS = ("per_day", "max_days", "keep")
DAY = timedelta(days=1)
TASKS = ("classifier", "pattern")  # the training runs of runtime/training.py
RECIPE_KEYS = ("describe", "task", "threshold", "lesson", "seeds", "calibration_seeds", "timeout")  # besides its own


class RubricError(ValueError):
    """A rubric file that cannot be used; the message names the file and what is wrong."""


def item_name(function: str, aspect: str) -> str:
    """How reports name an item: 'rnn_forward: final state'."""
    return f"{function}: {aspect.replace('_', ' ')}"


@dataclass(frozen=True)
class Item:
    function: str  # "rnn_forward", "SequenceClassifier"
    aspect: str  # "output"
    points: float

    @property
    def name(self) -> str:
        return item_name(self.function, self.aspect)

    @property
    def test_id(self) -> tuple[str, str]:
        """(suite file stem, test name) of the item's test in the hidden suite (autograder/suites/test_items.py)."""
        return "test_items", f"test_item[{self.function}.{self.aspect}]"


@dataclass(frozen=True)
class Limits:
    """Every limit on a grading, with its default: the rubric's [limits] sets any of them."""

    call_timeout: float = 10.0  # seconds per call of the student's code, unless a check names its own
    fit_timeout: float = 60.0  # seconds for fit_baseline's call: scikit-learn's fit runs in it
    grading_timeout: float = 600.0  # seconds for a whole grading, start-up included
    memory_mb: int = 4096  # address-space ceiling of the worker
    grader_memory_mb: int = 640  # the grading process's own data (heap, private mappings): well under 768 MB
    output_kb: int = 16  # the student's output kept per call
    text_chars: int = 2500  # characters kept of each text an answer brings back (a string, a type name, a message)
    text_lines: int = 100  # lines kept of each such text
    answer_chars: int = 64_000  # characters kept of all the texts of one answer together
    disk_mb: int = 256  # what the worker may write to disk, all its files together (and any one file)
    similarity_kb: int = 256  # `autograde similarity` reads at most this much of a student's module (else skips it)
    similarity_nodes: int = 10_000  # and compares at most this many syntax nodes of one TODO with its helpers

    @property
    def memory_bytes(self) -> int:
        return self.memory_mb << 20

    @property
    def grader_memory_bytes(self) -> int:
        return self.grader_memory_mb << 20

    @property
    def disk_bytes(self) -> int:
        return self.disk_mb << 20

    @property
    def output_bytes(self) -> int:
        return self.output_kb << 10

    @property
    def text(self) -> Bounds:
        """What the grader takes in of an answer's texts: the rest is cut, with a note, as it is read."""
        return Bounds(self.text_chars, self.text_lines, self.answer_chars)


@dataclass(frozen=True)
class Recipe:
    """A threshold item: the grader's training run over the student's code, decided on the median
    accuracy over `seeds`. `settings` is the whole [thresholds.F.A] table, as runtime/training.py reads it."""

    function: str
    aspect: str
    describe: str  # what is trained, in the students' words
    task: str  # one of TASKS
    threshold: float  # the median accuracy needed
    lesson: float  # what the lesson's model reached
    seeds: tuple[int, ...]
    calibration_seeds: int  # seeds `autograde calibrate` trains over
    timeout: float  # seconds for one training run
    settings: dict[str, Any] = field(compare=False, repr=False)

    @property
    def name(self) -> str:
        return item_name(self.function, self.aspect)


@dataclass(frozen=True)
class Report:
    """When the class report's item statistics point an item out, with its defaults: the rubric's [report] sets any.
    Facility is the mean fraction of an item's points; discrimination the correlation of its score with the rest
    of the total (the corrected item-total correlation, as PrairieLearn and Moodle compute it)."""

    everyone_passes: float = 0.95  # facility at least this: (nearly) everyone passes the item
    everyone_fails: float = 0.05  # facility at most this: (nearly) everyone fails it
    low_discrimination: float = 0.2  # discrimination below this: the item does not separate students
    min_students: int = 5  # graded students below this: too few to point any item out


@dataclass(frozen=True)
class Late:
    """The late-work policy ([late]). The roster's shard job grades the last commit at most `max_days`
    after the student's deadline ("better": the last on-time commit too); the gradebook takes `per_day`
    of the score per day late, a part of a day counting as a day, and with "better" keeps the higher
    of the two totals after the penalty."""

    per_day: float  # fraction of the score lost per day (or part of a day) after the deadline
    max_days: int  # commits later than this many days after the deadline are not graded
    keep: str = "latest"  # one of KEEP

    def days_late(self, after_deadline: timedelta) -> int:
        """Whole days late: a part of a day counts as a day; 0 for work in by the deadline."""
        return max(0, math.ceil(after_deadline / DAY))

    def penalty(self, raw_total: float, days: int) -> float:
        """The points taken from `raw_total` for work `days` days late (never more than all of them)."""
        return round(raw_total * min(1.0, self.per_day * days), 2)


@dataclass(frozen=True)
class Credit:
    """Credit by named mistake ([credit]): the fraction of an item's points kept when the item failed
    with a wrong answer whose check named exactly one catalogue mistake, one of these."""

    fractions: dict[str, float] = field(default_factory=dict)  # catalogue id -> fraction kept, in [0, 1]

    def applies(self, failure: str, mistakes: list[str]) -> tuple[str, float] | None:
        """(id, fraction) for an item that failed with `failure` naming `mistakes`; None when no credit is due."""
        if failure != "wrong" or len(mistakes) != 1 or mistakes[0] not in self.fractions:
            return None  # a mistake the grader cannot name, or two at once, earns what it earns without the rubric
        return mistakes[0], self.fractions[mistakes[0]]


@dataclass(frozen=True)
class Rubric:
    items: tuple[Item, ...]
    limits: Limits = Limits()
    recipes: tuple[Recipe, ...] = ()  # the threshold items', in the file's order
    path: Path = RUBRIC  # the file it was read from
    text: str = field(default="", compare=False, repr=False)  # that file's text: part of a grading's key
    late: Late | None = None  # None: no [late] section, no late work graded
    credit: Credit = field(default_factory=Credit)  # empty: no [credit] section
    report: Report = Report()  # the class report's item statistics: when an item is pointed out

    @property
    def total(self) -> float:
        return sum(item.points for item in self.items)

    @property
    def functions(self) -> list[str]:
        return list(dict.fromkeys(item.function for item in self.items))

    def select(self, only: list[str] | None) -> "Rubric":
        """The items (and recipes) of the named functions (all of them for None)."""
        if not only:
            return self
        unknown = sorted(set(only) - set(self.functions))
        if unknown:
            raise ValueError(f"no rubric items for {', '.join(unknown)}; known: {', '.join(self.functions)}")
        items = tuple(item for item in self.items if item.function in only)
        return replace(self, items=items, recipes=tuple(recipe for recipe in self.recipes if recipe.function in only))

    def recipe(self, function: str, aspect: str) -> Recipe | None:
        """The recipe of item `function: aspect`; None when it is not a threshold item."""
        return next((r for r in self.recipes if (r.function, r.aspect) == (function, aspect)), None)


def load(path: Path | None = None) -> Rubric:
    """The rubric in `path` (the grader's own rubric.toml when None), checked; RubricError says what is wrong."""
    path = RUBRIC if path is None else Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
        text = with_records(text, tomllib.loads(text))
        data = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise RubricError(f"{path} cannot be read as a rubric: {error}") from None
    except todos.RecordError as error:
        raise RubricError(str(error)) from None
    try:
        return _rubric(data, path, text)
    except RubricError as error:
        raise RubricError(f"{path}: {error}") from None


def with_records(text: str, data: dict[str, Any]) -> str:
    """The rubric file's text, with the records' [points] and [thresholds] after it where it sets none itself."""
    tables = {name: table for name, table in todos.rubric_tables().items() if name not in data}
    if not tables:
        return text
    lines = ["", "# From the exercises' records (autograder/todos/<function>/record.toml): not set by the file above."]
    for name, by_function in tables.items():
        for function, table in by_function.items():
            lines += _rendered(f"{name}.{function}", table)
    return text.rstrip("\n") + "\n" + "\n".join(lines) + "\n"


def _rendered(name: str, table: dict[str, Any]) -> list[str]:
    """A TOML table holding numbers, strings, booleans and lists of them, and tables of those (recipes)."""
    scalars = [f"{key} = {_value(value)}" for key, value in table.items() if not isinstance(value, dict)]
    lines = ["", f"[{name}]", *scalars] if scalars else []
    for key, value in table.items():
        if isinstance(value, dict):
            lines += _rendered(f"{name}.{key}", value)
    return lines


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string: JSON's escapes are TOML's
    if isinstance(value, list):
        return "[" + ", ".join(_value(item) for item in value) + "]"
    return repr(value)


def loads(text: str, path: Path) -> Rubric:
    """The rubric whose file's text is `text` (a grading's record of it), checked; `path` names where it was read."""
    try:
        return _rubric(tomllib.loads(text), path, text)
    except tomllib.TOMLDecodeError as error:
        raise RubricError(f"{path} cannot be read as a rubric: {error}") from None
    except RubricError as error:
        raise RubricError(f"{path}: {error}") from None


def _rubric(data: dict[str, Any], path: Path, text: str) -> Rubric:
    unknown = sorted(name for name in set(data) - set(SECTIONS) - set(SETTINGS) if isinstance(data[name], dict))
    if unknown:
        raise RubricError(f"unknown section [{unknown[0]}] (a rubric holds {', '.join(SECTIONS)})")
    unknown = sorted(name for name in set(data) - set(SECTIONS) - set(SETTINGS))
    if unknown:
        raise RubricError(f"unknown setting {unknown[0]} (the top of a rubric sets only {', '.join(SETTINGS)})")
    items = _items(_table(data, "points"))
    _against_records(items)
    _adds_up(items, data.get("total"))
    recipes = tuple(_recipe(function, aspect, table, items) for function, aspect, table in _threshold_tables(data))
    late = _late(data["late"]) if "late" in data else None
    credit = _credit(_table(data, "credit"))
    report = _report(_table(data, "report"))
    return Rubric(items, _limits(_table(data, "limits")), recipes, path, text, late, credit, report)


def _table(data: dict[str, Any], name: str) -> dict[str, Any]:
    table = data.get(name, {})
    if not isinstance(table, dict):
        raise RubricError(f"[{name}] must be a table")
    return table


def _number(value: Any, where: str) -> float:
    """A non-negative number (TOML int or float); RubricError naming `where` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise RubricError(f"{where} must be a number of at least 0, not {value!r}")
    return float(value)


def _items(points: dict[str, Any]) -> tuple[Item, ...]:
    items = []
    for function, aspects in points.items():
        if not isinstance(aspects, dict) or not aspects:
            raise RubricError(f"[points.{function}] must be a table of aspect = points")
        for aspect, value in aspects.items():
            items.append(Item(function, aspect, _number(value, f"points.{function}.{aspect}")))
    if not items:
        raise RubricError("[points] names no item")
    return tuple(items)


def _adds_up(items: tuple[Item, ...], total: Any) -> None:
    """The points add up to the total the file states: a mistyped item's points cannot pass unseen."""
    if total is None:
        raise RubricError("total is missing: state the points the items add up to, e.g. total = 100 at the top")
    if isinstance(total, bool) or not isinstance(total, (int, float)) or total <= 0:
        raise RubricError(f"total must be a number above 0, not {total!r}")
    found = sum(item.points for item in items)
    if not math.isclose(found, total, abs_tol=1e-9):
        raise RubricError(
            f"the points add up to {found:g}, not total = {total:g}: an item's points or the total is wrong"
        )


def _threshold_tables(data: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(function, aspect, table) of each [thresholds.F.A], in the file's order."""
    found = []
    for function, aspects in _table(data, "thresholds").items():
        if not isinstance(aspects, dict) or not all(isinstance(table, dict) for table in aspects.values()):
            raise RubricError(f"[thresholds.{function}] must hold one table per aspect, [thresholds.{function}.ASPECT]")
        found += [(function, aspect, table) for aspect, table in aspects.items()]
    return found


def _recipe(function: str, aspect: str, table: dict[str, Any], items: tuple[Item, ...]) -> Recipe:
    where = f"thresholds.{function}.{aspect}"
    if (function, aspect) not in {(item.function, item.aspect) for item in items}:
        raise RubricError(f"[{where}] has no item: add {aspect} to [points.{function}]")
    missing = [name for name in RECIPE_KEYS if name not in table]
    if missing:
        raise RubricError(f"[{where}] lacks {', '.join(missing)}")
    if table["task"] not in TASKS:
        raise RubricError(f"{where}.task must be one of {', '.join(TASKS)}, not {table['task']!r}")
    seeds = table["seeds"]
    if not isinstance(seeds, list) or not seeds or not all(type(seed) is int for seed in seeds):
        raise RubricError(f"{where}.seeds must be a list of integers, not {seeds!r}")
    if not isinstance(table.get("seeds_decided_early", True), bool):
        raise RubricError(f"{where}.seeds_decided_early must be true or false, not {table['seeds_decided_early']!r}")
    return Recipe(
        function,
        aspect,
        str(table["describe"]),
        table["task"],
        _accuracy(table["threshold"], f"{where}.threshold"),
        _accuracy(table["lesson"], f"{where}.lesson"),
        tuple(seeds),
        int(_number(table["calibration_seeds"], f"{where}.calibration_seeds")),
        _number(table["timeout"], f"{where}.timeout"),
        dict(table),
    )


def _accuracy(value: Any, where: str) -> float:
    """An accuracy: above 0 and at most 1 (0.70 for 70%); RubricError naming `where` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise RubricError(f"{where} must be an accuracy above 0 and at most 1 (0.70 for 70%), not {value!r}")
    return float(value)


def _limits(table: dict[str, Any]) -> Limits:
    kinds = {limit.name: limit.type for limit in fields(Limits)}
    unknown = sorted(set(table) - set(kinds))
    if unknown:
        raise RubricError(f"unknown limit {unknown[0]} (the limits are {', '.join(kinds)})")
    values = {name: _number(value, f"limits.{name}") for name, value in table.items()}
    whole = [name for name, value in values.items() if kinds[name] is int and not value.is_integer()]
    if whole:
        raise RubricError(f"limits.{whole[0]} must be a whole number, not {table[whole[0]]!r}")
    return Limits(**{name: int(value) if kinds[name] is int else value for name, value in values.items()})


def _report(table: dict[str, Any]) -> Report:
    kinds = {setting.name: setting.type for setting in fields(Report)}
    unknown = sorted(set(table) - set(kinds))
    if unknown:
        raise RubricError(f"unknown setting report.{unknown[0]} (the settings are {', '.join(kinds)})")
    values = {name: _fraction(value, f"report.{name}") for name, value in table.items() if kinds[name] is float}
    if "min_students" in table:
        count = table["min_students"]
        if isinstance(count, bool) or not isinstance(count, int) or count < 2:
            raise RubricError(f"report.min_students must be a whole number of at least 2, not {count!r}")
        values["min_students"] = count
    return Report(**values)


def _against_records(items: tuple[Item, ...]) -> None:
    """Every item is one of the exercises' (the hidden suite has its test) and every exercise's item has points."""
    known = {(function, aspect) for function, table in todos.rubric_tables()["points"].items() for aspect in table}
    for item in items:
        if item.function not in {function for function, _ in known}:
            raise RubricError(
                f"[points.{item.function}]: no hidden suite grades {item.function} (no autograder/todos/"
                f"{item.function}/record.toml)"
            )
        if (item.function, item.aspect) not in known:
            raise RubricError(
                f"points.{item.function}.{item.aspect} has no hidden test (no item of autograder/todos/"
                f"{item.function}/record.toml)"
            )
    named = {(item.function, item.aspect) for item in items}
    for function in dict.fromkeys(function for function, _ in known):
        missing = [aspect for f, aspect in sorted(known) if f == function and (f, aspect) not in named]
        if missing:
            raise RubricError(f"[points.{function}] lacks {', '.join(missing)}: every hidden test needs its points")


def _fraction(value: Any, where: str) -> float:
    """A number from 0 to 1; RubricError naming `where` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise RubricError(f"{where} must be a fraction from 0 to 1, not {value!r}")
    return float(value)


def _late(table: Any) -> Late:
    if not isinstance(table, dict):
        raise RubricError("[late] must be a table")
    unknown = sorted(set(table) - set(LATE_KEYS))
    if unknown:
        raise RubricError(f"unknown setting late.{unknown[0]} (the settings are {', '.join(LATE_KEYS)})")
    missing = [name for name in LATE_KEYS[:2] if name not in table]
    if missing:
        raise RubricError(f"[late] lacks {', '.join(missing)}")
    days = table["max_days"]
    if isinstance(days, bool) or not isinstance(days, int) or days < 0:
        raise RubricError(f"late.max_days must be a whole number of days, at least 0, not {days!r}")
    keep = table.get("keep", "latest")
    if keep not in KEEP:
        raise RubricError(f"late.keep must be one of {', '.join(map(repr, KEEP))}, not {keep!r}")
    return Late(_fraction(table["per_day"], "late.per_day"), days, keep)


def _credit(table: dict[str, Any]) -> Credit:
    known = catalogue.CATALOGUE  # read from the records when a rubric gives credit, not when this module loads
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise RubricError(f"[credit] names {unknown[0]}, which is not a catalogue id (they are {', '.join(known)})")
    return Credit({mistake: _fraction(value, f"credit.{mistake}") for mistake, value in table.items()})


def percent(fraction: float) -> str:
    """0.1 -> '10%', 0.125 -> '12.5%'."""
    return f"{round(fraction * 100, 2):g}%"


def days(count: int) -> str:
    return f"{count} day{'s' * (count != 1)}"


def late_policy(late: Late) -> str:
    """The late-work policy in a sentence, as the reports state it."""
    kept = "the better of the last on-time commit and the last commit counts" if late.keep == "better" else ""
    return (
        f"{percent(late.per_day)} of the score per day late, a part of a day counting as a day; commits more than "
        f"{days(late.max_days)} late are not graded" + (f"; {kept}" if kept else "")
    )


def describe(rubric: Rubric) -> list[str]:
    """What a rubric sets, a line each: its points, its late-work policy, its credit by named mistake."""
    lines = [f"{rubric.path}: OK, {len(rubric.items)} items, {rubric.total:g} points, {len(rubric.recipes)} thresholds"]
    late = "none: the last commit before the deadline is graded (no [late])"
    lines.append(f"late work: {late_policy(rubric.late) if rubric.late else late}")
    credit = ", ".join(f"{mistake} keeps {percent(value)}" for mistake, value in rubric.credit.fractions.items())
    lines.append(f"credit by named mistake: {credit or 'none (no [credit])'}")
    return lines


def main(argv: list[str]) -> int:
    """`python -m autograder.rubric [FILE]`: check a rubric file and print what it sets; exit 2 saying why it is bad.
    `autograde rubric check` does the same; this one runs where nothing is installed (the roster workflow's first
    job), on the standard library alone."""
    try:
        found = load(Path(argv[0]) if argv else None)
    except RubricError as error:
        print(f"rubric: {error}", file=sys.stderr)
        return 2
    print("\n".join(describe(found)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The week's exercises, one record each: `todos/<key>/record.toml`, found by its folder, in TODO order.

A record is everything the grader knows of one graded function besides its code: the module and function
it grades, its rubric items and their points, the recipes of its threshold items, what its items import up
front, whether they train, and the nbgrader notebook's visible check. Whatever lists the week's functions
(the rubric's points, the hidden suite, the notebooks' checks, the contract the tests hold, the docs) reads
them here; nothing else names them all. The order is the TODOs' (the solution markers', `stubs.todos`).
Beside its record, an exercise's folder holds its code: `variants.py` (its mistakes) and `checks.py` (a check per
item, found by `check`, the one rule; the folders are no packages: their modules are imported by name).
docs/maintaining.md, "Add or change a TODO", says how to add one.
"""

import functools
import importlib
import inspect
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder import stubs
from autograder.locations import SOLUTIONS, TODOS

RECORD = "record.toml"  # each exercise's record, in its own folder
KEYS = (
    "module",
    "function",
    "preload",
    "trains",
    "also",
    "items",
    "thresholds",
    "mistakes",
    "smoke",
)  # a record's keys
WORDS = ("explanation", "lesson")  # what a mistake (and each of its forms) says


class RecordError(ValueError):
    """A record that cannot be used, or a TODO without one; the message names the file and what is wrong."""


@dataclass(frozen=True)
class Record:
    key: str  # "SequenceClassifier": its folder, and the function its rubric items name
    module: str  # "classifier": solutions/classifier.py, exercises/classifier.py
    function: str  # "SequenceClassifier.forward": the function its TODO fills in
    points: dict[str, float]  # aspect -> points, in the record's order
    thresholds: dict[str, dict[str, Any]]  # aspect -> its training recipe (rubric.Recipe's fields)
    smoke: str  # the notebook's visible check after the answer (shapes and types only)
    preload: tuple[str, ...] = ()  # what its items import up front, on both sides
    trains: bool = False  # its items train a model
    mistakes: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> its words, lesson and forms' own
    also: tuple[str, ...] = ()  # ids of other exercises' mistakes made in this one too ("L3": arguments changed)

    @property
    def target(self) -> str:
        """Where its function lives in a submission: "classifier.SequenceClassifier.forward"."""
        return f"{self.module}.{self.function}"


@functools.cache
def records(todos: Path = TODOS, solutions: Path = SOLUTIONS) -> tuple[Record, ...]:
    """Every exercise's record, in the order of the TODOs; RecordError when one is broken or missing."""
    found = {path.parent.name: _record(path) for path in sorted(todos.glob(f"*/{RECORD}"))}
    order = [(todo.module, todo.function) for todo in stubs.todos(solutions)]
    lacking = [todo for todo in order if todo not in {(r.module, r.function) for r in found.values()}]
    if lacking:
        module, function = lacking[0]
        raise RecordError(
            f"no record in {todos} for the TODO of {function} in {module}.py (add {todos.name}/<key>/{RECORD})"
        )
    stray = [r for r in found.values() if (r.module, r.function) not in order]
    if stray:
        raise RecordError(
            f"{todos / stray[0].key / RECORD}: no TODO in {solutions.name}/{stray[0].module}.py fills in "
            f"{stray[0].function}"
        )
    return tuple(sorted(found.values(), key=lambda r: order.index((r.module, r.function))))


def record(key: str) -> Record:
    """The record of `key` ("lstm_step", "SequenceClassifier"); KeyError when the week has none."""
    return {r.key: r for r in records()}[key]


def by_function() -> dict[str, Record]:
    """Each record by the function its TODO fills in ("SequenceClassifier.forward")."""
    return {r.function: r for r in records()}


def checks_module(key: str) -> str:
    """The module of exercise `key`'s checks, its folder's checks.py: "autograder.todos.lstm_step.checks"."""
    return f"{__name__}.{key}.checks"


def check(key: str, aspect: str) -> Callable[..., None]:
    """The check of item `key: aspect`, threshold items' too: check_<key>_<aspect> in autograder/todos/<key>/checks.py
    (imported when asked: it imports torch); KeyError when the week has no exercise `key`."""
    record(key)
    return getattr(importlib.import_module(checks_module(key)), f"check_{key}_{aspect}")


def run_check(key: str, aspect: str, student: object, rubric: object = None) -> None:
    """Run the item's check on `student`; the checks that read the rubric (a recipe, a limit) are given it (None: the
    grader's own, which they read themselves). The hidden suite and the nbgrader notebooks' hidden tests call this."""
    function = check(key, aspect)
    if len(inspect.signature(function).parameters) > 1:
        function(student, rubric)
    else:
        function(student)


def rubric_tables() -> dict[str, dict[str, Any]]:
    """The rubric's [points] and [thresholds] as the records set them."""
    return {
        "points": {r.key: dict(r.points) for r in records()},
        "thresholds": {r.key: dict(r.thresholds) for r in records() if r.thresholds},
    }


def _record(path: Path) -> Record:
    data = _toml(path)
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise RecordError(f"{path}: unknown key {unknown[0]} (a record holds {', '.join(KEYS)})")
    for key in ("module", "function", "items"):
        if key not in data:
            raise RecordError(f"{path}: it needs `{key}`")
    function = _text(data, "function", path)
    if path.parent.name != function.split(".")[0]:
        raise RecordError(f"{path}: its folder must be named {function.split('.')[0]}, as its rubric items name it")
    return Record(
        key=path.parent.name,
        module=_text(data, "module", path),
        function=function,
        points=_points(data["items"], path),
        thresholds=_thresholds(data.get("thresholds", {}), data["items"], path),
        smoke=_text(data.get("smoke", {}), "code", path, "[smoke] "),
        preload=tuple(data.get("preload", ())),
        trains=bool(data.get("trains", False)),
        mistakes=_mistakes(data.get("mistakes", {}), path),
        also=tuple(data.get("also", ())),
    )


def _toml(path: Path) -> dict[str, Any]:
    """The record's TOML; RecordError naming the file, and a hint where the line the reader stopped at has a quote."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise RecordError(f"{path} cannot be read as a record: {error}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise RecordError(
            f"{path} cannot be read as a record: not valid TOML, {error}{_quoting(text, error)}"
        ) from None


def _quoting(text: str, error: tomllib.TOMLDecodeError) -> str:
    """The hint for a string that ends early: a word's apostrophe in '...', a quotation in "..." (the usual slip
    in a record's words); "" when the line the reader stopped at holds no quote before where it stopped."""
    stopped = re.search(r"at line (\d+), column (\d+)", str(error))  # Python 3.11's error has no lineno: its words
    lines = text.splitlines()
    if stopped is None or not 0 < int(stopped[1]) <= len(lines):
        return ""
    read = lines[int(stopped[1]) - 1][: int(stopped[2])]  # a quote in a comment after it is no string
    if "'" not in read and '"' not in read:
        return ""
    return (
        ". A string ends at the next quote of its kind: one holding an apostrophe goes in double quotes, one holding "
        "both ' and \" in triple quotes: '''...'''"
    )


def _text(table: Any, key: str, path: Path, where: str = "") -> str:
    value = table.get(key) if isinstance(table, dict) else None
    if not isinstance(value, str) or not value.strip():
        raise RecordError(f"{path}: {where}`{key}` must be a non-empty string")
    return value


def _points(items: Any, path: Path) -> dict[str, float]:
    if not isinstance(items, dict) or not items:
        raise RecordError(f"{path}: [items] must set at least one aspect = points")
    wrong = [
        aspect for aspect, points in items.items() if isinstance(points, bool) or not isinstance(points, int | float)
    ]
    if wrong:
        raise RecordError(f"{path}: [items] {wrong[0]} must be a number of points")
    return dict(items)


def _thresholds(tables: Any, items: dict[str, Any], path: Path) -> dict[str, dict[str, Any]]:
    if not isinstance(tables, dict) or not all(isinstance(table, dict) for table in tables.values()):
        raise RecordError(f"{path}: [thresholds.<aspect>] must be tables")
    stray = [aspect for aspect in tables if aspect not in items]
    if stray:
        raise RecordError(f"{path}: [thresholds.{stray[0]}] has no item in [items]")
    return dict(tables)


def _mistakes(tables: Any, path: Path) -> dict[str, dict[str, Any]]:
    """[mistakes.<id>]: each with its words (WORDS), and [mistakes.<id>.forms.<form>] each with its own."""
    if not isinstance(tables, dict):
        raise RecordError(f"{path}: [mistakes.<id>] must be tables")
    for mistake, table in tables.items():
        forms = table.get("forms", {}) if isinstance(table, dict) else None
        if not isinstance(forms, dict):
            raise RecordError(
                f"{path}: [mistakes.{mistake}] must be a table, its forms [mistakes.{mistake}.forms.<form>]"
            )
        for where, words in [
            (f"mistakes.{mistake}", table),
            *((f"mistakes.{mistake}.forms.{f}", w) for f, w in forms.items()),
        ]:
            missing = [key for key in WORDS if not isinstance(words, dict) or not isinstance(words.get(key), str)]
            if missing:
                raise RecordError(f"{path}: [{where}] needs {missing[0]} (a string)")
    return dict(tables)

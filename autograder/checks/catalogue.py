"""The misconception catalogue: each known mistake once, with the lesson to reread.

The ids are those of the course's catalogue (shared/misconceptions.md). Each exercise's record writes its own mistakes,
`[mistakes.<id>]` in `autograder/todos/<key>/record.toml` (their words and lesson; the code that makes each is its
variants.py); this module holds what they are made of (`Mistake`, `Form`) and the week's catalogue derived from the
records, in the TODOs' order: `CATALOGUE` (each mistake by its id) and `MISTAKES`, read when first asked for.
Standard library only: `python -S -m autograder.rubric` reads the ids.

A check that recognises a mistake leads its feedback with `feedback(key)`:
`[G1] <what the output shows and what to do>.\n  Reread: <lesson>.` A key is an id,
an id and a form after ':' ("R1:hh") where one form of a mistake needs its own words, or
such parts joined by '+' ("C3+C4", "K3+S5", "R1:hh+R6") for two mistakes made at once, each
then named on its own line.
"""

import functools
from dataclasses import dataclass, field, replace
from typing import Any

from autograder import todos


@dataclass(frozen=True)
class Form:
    """A form of a mistake that is explained in its own words."""

    explanation: str
    lesson: str


@dataclass(frozen=True)
class Mistake:
    id: str
    function: str
    explanation: str  # one sentence: what the output shows, and the fix
    lesson: str
    forms: dict[str, Form] = field(default_factory=dict)  # "hh" -> its own words, for "R1:hh"
    also: tuple[str, ...] = ()  # further exercises where the same mistake is made (S5: train_step): their ALSO

    @property
    def functions(self) -> tuple[str, ...]:
        return (self.function, *self.also)

    @property
    def feedback(self) -> str:
        return _text(self.id, self.explanation, self.lesson)

    def feedback_for(self, form: str) -> str:
        """The feedback for one form ("hh" of "R1:hh"); the mistake's own for any other."""
        own = self.forms.get(form)
        return self.feedback if own is None else _text(self.id, own.explanation, own.lesson)


def _text(mistake: str, explanation: str, lesson: str) -> str:
    return f"[{mistake}] {explanation}.\n  Reread: {lesson}."


VALUES = "its values differ from the reference's"  # why a mistake in the values loses an item (a variants.py's COSTS)


@dataclass(frozen=True)
class Mistakes:
    """One exercise's catalogued mistakes, as its record writes them."""

    key: str  # the exercise's record: "SequenceClassifier"
    mistakes: tuple[Mistake, ...]  # its own entries of the catalogue, in its order
    also: tuple[str, ...]  # ids of other exercises' mistakes made in it too ("L3": its arguments changed in place)


def exercise(key: str) -> Mistakes | None:
    """The catalogued mistakes of exercise `key` ("lstm_step"); None when its record names none."""
    return _exercises().get(key)


def exercises() -> tuple[Mistakes, ...]:
    """Every exercise's catalogued mistakes, in the TODOs' order."""
    return tuple(_exercises().values())


@functools.cache
def _exercises() -> dict[str, Mistakes]:
    return {record.key: _read(record) for record in todos.records() if record.mistakes}


def _read(record: todos.Record) -> Mistakes:
    entries = tuple(
        Mistake(id, record.key, words["explanation"], words["lesson"], forms=_forms(words.get("forms", {})))
        for id, words in record.mistakes.items()
    )
    return Mistakes(record.key, entries, record.also)


def _forms(tables: dict[str, dict[str, str]]) -> dict[str, Form]:
    return {form: Form(words["explanation"], words["lesson"]) for form, words in tables.items()}


@functools.cache
def _catalogue() -> dict[str, Mistake]:
    """Each mistake by its id, in the TODOs' order, with the exercises whose ALSO names it as its `also`."""
    found = exercises()
    entries = [mistake for exercise in found for mistake in exercise.mistakes]
    ids = [mistake.id for mistake in entries]
    unknown = [(exercise.key, id) for exercise in found for id in exercise.also if id not in ids]
    if unknown or len(set(ids)) < len(ids):
        wrong = f"{unknown[0][0]}'s ALSO names {unknown[0][1]}, no exercise's mistake" if unknown else "an id twice"
        raise ValueError(f"the catalogue cannot be read: {wrong}")
    also = {id: tuple(exercise.key for exercise in found if id in exercise.also) for id in ids}
    return {mistake.id: replace(mistake, also=also[mistake.id]) for mistake in entries}


def __getattr__(name: str) -> Any:
    """`CATALOGUE` (each mistake by its id) and `MISTAKES` (every one), the whole week's, in the TODOs' order."""
    if name == "CATALOGUE":
        return _catalogue()
    if name == "MISTAKES":
        return list(_catalogue().values())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def ids(key: str) -> list[str]:
    """The catalogue ids a variant key names: "G1", "R1:hh" (a form of R1), "C3+C4" or "R1:hh+R6" (two at once)."""
    return [part.partition(":")[0] for part in key.split("+")]


def feedback(key: str) -> str:
    """The feedback that names the mistake(s) of a variant key, each with its lesson (and its form's words)."""
    parts = [part.partition(":") for part in key.split("+")]
    return "\n".join(_catalogue()[mistake].feedback_for(form) for mistake, _, form in parts)

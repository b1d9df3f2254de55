"""Known-bug versions of the reference, one per catalogue mistake (and its common forms).

A check runs these on its own inputs; when a student's output matches a variant on
every input, the feedback names the mistake. Each function has one mistaken
implementation with keyword options, and a `Table` of the options each mistake sets:
keys are catalogue ids, with a suffix after ':' for another form of the same mistake
("R3:ih"). Two mistakes of one function whose options do not overlap make a pair
("K3+S5": never zeroed and softmax before the loss), tried when no single one matches.

Each exercise's table and its mistaken implementation live in its folder, `autograder/todos/<key>/variants.py`
(`TABLE`): `of(key)` is that table. This module holds the `Table` they are made of, and derives the whole week's from
the exercises' records when first asked for: `BY_FUNCTION` (each table by the function its TODO fills in, in the TODOs'
order) and `IN_PLACE` (the functions whose effect is on the module they are given). It imports no torch itself: the
tables do, when they are read.
"""

import functools
import importlib
import importlib.util
import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from autograder import todos


@dataclass(frozen=True)
class Table(Mapping[str, Callable[..., Any]]):
    """One function's known mistakes: each key's options of the function's mistaken implementation."""

    implementation: Callable[..., Any]
    options: dict[str, dict[str, Any]]
    in_place: bool = False  # its effect is on the module it is given (set_forget_bias), not on what it returns

    def __getitem__(self, key: str) -> Callable[..., Any]:
        """The variant of a key: one mistake ("R1:hh") or a pair of them ("R1:hh+R6")."""
        merged: dict[str, Any] = {}
        for part in key.split("+"):
            merged.update(self.options[part])
        return functools.partial(self.implementation, **merged)

    def __iter__(self) -> Iterator[str]:
        return iter(self.options)

    def __len__(self) -> int:
        return len(self.options)

    def knows(self, key: str) -> bool:
        return all(part in self.options for part in key.split("+"))

    @functools.cached_property
    def pair_keys(self) -> tuple[str, ...]:
        """Every two mistakes of different ids whose options can be combined, in the table's order."""
        return self.combination_keys(2)

    @functools.cached_property
    def most(self) -> int:
        """The most mistakes one variant can combine: one per id."""
        return len({key.partition(":")[0] for key in self.options})

    def combination_keys(self, size: int) -> tuple[str, ...]:
        """Every `size` mistakes of different ids whose options can be combined ("C2+C3+C4"), in the table's order."""
        if size not in self._combinations:
            keys = itertools.combinations(self.options, size)
            self._combinations[size] = tuple("+".join(keys) for keys in keys if self._combinable(keys))
        return self._combinations[size]

    @functools.cached_property
    def _combinations(self) -> dict[int, tuple[str, ...]]:
        return {}  # size -> its keys, computed when first asked for

    def _combinable(self, keys: tuple[str, ...]) -> bool:
        ids = {key.partition(":")[0] for key in keys}
        options = [set(self.options[key]) for key in keys]
        return len(ids) == len(keys) and sum(map(len, options)) == len(set().union(*options))

    def pairs(self, among: Callable[[str], bool] = lambda key: True) -> dict[str, Callable[..., Any]]:
        """The combinations' variants (two mistakes or more), optionally only of mistakes for which `among(key)`
        holds: any combination of the mistakes a test sees is named, not only pairs."""
        chosen = [key for key in self.options if among(key)]
        found: dict[str, Callable[..., Any]] = {}
        for size in range(2, len(chosen) + 1):
            keys = (keys for keys in itertools.combinations(chosen, size) if self._combinable(keys))
            found.update({"+".join(keys): self["+".join(keys)] for keys in keys})
        return found


@functools.cache
def of(key: str) -> Table:
    """The variant table of exercise `key` ("lstm_step", "SequenceClassifier"): its todos/<key>/variants.py."""
    return importlib.import_module(_module(key)).TABLE


@dataclass(frozen=True)
class Costs:
    """What an exercise's variants cost, as its variants.py says and tests/autograder/checks/test_item_aspects.py holds
    it to."""

    costs: dict[str, dict[str, str]]  # variant key -> {item aspect: why the variant loses it}; the rest pass
    kept: dict[str, tuple[str, ...]]  # variant key (a mistake in the values) -> the aspect items it keeps
    at_once: tuple[str, ...]  # variant keys of mistakes made at once ("C2+C3+C4"), each of which is named


def costs(key: str) -> Costs:
    """What the variants of exercise `key` cost: its variants.py's COSTS, KEPT and AT_ONCE."""
    module = importlib.import_module(_module(key))
    return Costs(dict(module.COSTS), dict(getattr(module, "KEPT", {})), tuple(getattr(module, "AT_ONCE", ())))


@functools.cache
def _by_function() -> dict[str, Table]:
    found = [record for record in todos.records() if importlib.util.find_spec(_module(record.key)) is not None]
    return {record.function: of(record.key) for record in found}


def _module(key: str) -> str:
    return f"{todos.__name__}.{key}.variants"


def __getattr__(name: str) -> Any:
    """`BY_FUNCTION`: every table, by the function it stands in for (as a TODO names it, "SequenceClassifier.forward");
    `IN_PLACE`: the functions whose effect is on the module they are given."""
    if name == "BY_FUNCTION":
        return _by_function()
    if name == "IN_PLACE":
        return {function for function, table in _by_function().items() if table.in_place}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

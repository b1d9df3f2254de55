"""The rubric file: points per item and the grader's limits, read once."""

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from autograder.locations import RUBRIC


@dataclass(frozen=True)
class Item:
    function: str  # "rnn_forward", "SequenceClassifier"
    aspect: str  # "output"
    points: float

    @property
    def name(self) -> str:
        return f"{self.function}: {self.aspect.replace('_', ' ')}"

    @property
    def test_id(self) -> tuple[str, str]:
        """(suite file stem, test function name) of the item's test."""
        return f"test_{self.function}", f"test_{self.aspect}"


@dataclass(frozen=True)
class Rubric:
    items: tuple[Item, ...]
    limits: dict[str, Any]
    thresholds: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)

    @property
    def total(self) -> float:
        return sum(item.points for item in self.items)

    @property
    def functions(self) -> list[str]:
        return list(dict.fromkeys(item.function for item in self.items))

    def select(self, only: list[str] | None) -> "Rubric":
        """The items of the named functions (all of them for None)."""
        if not only:
            return self
        unknown = sorted(set(only) - set(self.functions))
        if unknown:
            raise ValueError(f"no rubric items for {', '.join(unknown)}; known: {', '.join(self.functions)}")
        return replace(self, items=tuple(item for item in self.items if item.function in only))


def load(path: Path = RUBRIC) -> Rubric:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    items = tuple(
        Item(function, aspect, float(points))
        for function, aspects in data["points"].items()
        for aspect, points in aspects.items()
    )
    return Rubric(items, dict(data.get("limits", {})), dict(data.get("thresholds", {})))

"""One student's grading as the class report reads it, and the readers of a test's record in results.json:
only its structured parts (scores, `tags`, `extra_data`), never its text. Shared by `data` and `itemstats`."""

from dataclasses import dataclass

from autograder import stubs


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
class LateWork:
    """What the rubric's [late] did to one student's total, and why (the gradebook's words)."""

    days_late: int
    raw_total: float
    penalty: float
    note: str


def mapping(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def numeric(value: object) -> float | None:
    """A value read from results.json as a number; None when it is not one."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def score(record: dict | None) -> float:
    return numeric((record or {}).get("score")) or 0.0


def failure(record: dict | None) -> str:
    return str(mapping((record or {}).get("extra_data")).get("failure", ""))


def credited(record: dict | None) -> bool:
    """Whether the item scored by the rubric's [credit] (its extra_data keeps the credit and the raw score)."""
    return isinstance(mapping((record or {}).get("extra_data")).get("credit"), dict)


def tags(record: dict) -> list[str]:
    found = record.get("tags")
    return [str(tag) for tag in found] if isinstance(found, list) else []


def todo_labels() -> dict[str, str]:
    """Graded function -> "TODO 4 · gather-at-final-index", from the solutions' markers."""
    return {todo.function.split(".")[0]: todo.label for todo in stubs.todos()}

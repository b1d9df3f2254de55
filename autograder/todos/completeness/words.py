"""The small pieces of text the findings of `autograde todo check` are written with: counts, paths, first lines."""

from pathlib import Path

from autograder.locations import ROOT
from autograder.todos import Record


def counted(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def items_of(found: Record) -> str:
    """'4 items, 9 points'."""
    points = sum(found.points.values())
    return f"{counted(len(found.points), 'item')}, {points:g} point{'' if points == 1 else 's'}"


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def shown(path: Path) -> str:
    """The path from the checkout's root, as the findings say it."""
    return relative(path, ROOT)


def relative(path: Path, start: Path) -> str:
    try:
        return path.resolve().relative_to(start.resolve()).as_posix()
    except ValueError:
        return str(path)

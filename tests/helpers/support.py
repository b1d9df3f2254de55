"""Helpers for the project's tests: submissions built from the reference, graded in process."""

import ast
import dataclasses
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from autograder import rubric
from autograder.grading.grade import grade as grade_submission
from autograder.grading.results import GradingResult

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "exercises"


def build_submission(folder: Path, base: Path = SOLUTIONS, edits: dict[str, str] | None = None) -> Path:
    """A fork-like folder: exercises/ copied from `base`, then `edits` (module -> full source) written."""
    (folder / "exercises").mkdir(parents=True)
    for path in base.glob("*.py"):
        shutil.copyfile(path, folder / "exercises" / path.name)
    for module, source in (edits or {}).items():
        (folder / "exercises" / f"{module}.py").write_text(source)
    return folder


def appended_to(module: str, text: str, base: Path = SOLUTIONS) -> str:
    """The base module's source followed by `text`, whose definitions then replace the module's own."""
    return (base / f"{module}.py").read_text() + "\n\n" + text


def replace_in(module: str, old: str, new: str, base: Path = SOLUTIONS) -> str:
    """The reference module's source with one passage replaced (it must be there)."""
    source = (base / f"{module}.py").read_text()
    assert old in source, f"{old!r} is not in {module}.py"
    return source.replace(old, new)


def grade(
    submission: Path, only: list[str] | None = None, require_isolation: bool | None = None, **limits: float
) -> GradingResult:
    selected = rubric.load().select(only)
    if limits:
        selected = dataclasses.replace(selected, limits=dataclasses.replace(selected.limits, **limits))
    return grade_submission(submission, selected, require_isolation)


def code_without_docstrings(source: str) -> str:
    """The source with every docstring blanked (docstrings may show the math on purpose)."""
    lines = source.splitlines()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            for number in range(first.lineno - 1, first.end_lineno):
                lines[number] = ""
    return "\n".join(lines)


def dev_tool(name: str) -> str:
    """A command of the dev extra: beside this interpreter (a venv need not be activated), else on PATH."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    assert found, f"{name} is in the dev extra: python -m pip install -e '.[dev]'"
    return found


def rubric_file(path: Path, sections: str = "", points: Callable[[str, str], float] | None = None) -> Path:
    """A course section's own rubric: the grader's rubric.toml, its items' points set by `points(function,
    aspect)` when given, then `sections` (its [late], its [credit]). Tests read the values back from it."""
    lines, table, total = [], "", 0.0
    for line in rubric.load().text.splitlines():
        header = re.match(r"\[points\.(\w+)\]", line)
        table = header[1] if header else ("" if line.startswith("[") else table)
        item = re.match(r"(\w+) = [0-9.]+(.*)", line)
        if table and item and points:
            total += points(table, item[1])
        lines.append(f"{item[1]} = {points(table, item[1])!r}{item[2]}" if table and item and points else line)
    text = "\n".join(lines) + "\n\n" + sections
    if points:  # the file states the total its items add up to, as every rubric must
        text = re.sub(r"^total = [0-9.]+", f"total = {total!r}", text, count=1, flags=re.MULTILINE)
    path.write_text(text, encoding="utf-8")
    return path

"""The single source: strip the solution regions of `solutions/` into `exercises/`.

Each answer in `solutions/*.py` sits between `### BEGIN SOLUTION` and
`### END SOLUTION`, right after a comment that names the task:

    # TODO 1 · recurrence loop: what to do ...
    ### BEGIN SOLUTION
    ...the reference...
    ### END SOLUTION

The stub keeps the comment and replaces the region with one
`raise NotImplementedError("TODO 1 · recurrence loop: not implemented yet")`.
Everything else (given code, imports, docstrings) is copied byte for byte.
"""

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from autograder.locations import EXERCISES, SOLUTIONS

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
TODO = re.compile(r"#\s*TODO (\d+) · ([^:]+):")


class MarkerError(ValueError):
    """A solution file whose markers cannot be turned into a stub."""


@dataclass(frozen=True)
class Todo:
    """One task of the week, as its solution region declares it."""

    number: int
    name: str  # "recurrence loop"
    module: str  # "recurrence"
    function: str  # "rnn_forward" or "SequenceClassifier.forward"
    hint: str  # the whole TODO comment, without the leading '#'
    solution: str  # the reference code inside the region

    @property
    def label(self) -> str:
        return f"TODO {self.number} · {self.name}"


@dataclass(frozen=True)
class _Region:
    begin: int  # line index of BEGIN
    end: int  # line index of END
    comment_start: int  # first line of the TODO comment
    number: int
    name: str


def _regions(lines: list[str], path: Path) -> list[_Region]:
    regions, begin = [], None
    for index, line in enumerate(lines):
        marker = line.strip()
        if marker == BEGIN:
            if begin is not None:
                raise MarkerError(f"{path.name}:{index + 1}: BEGIN SOLUTION inside another region")
            begin = index
        elif marker == END:
            if begin is None:
                raise MarkerError(f"{path.name}:{index + 1}: END SOLUTION without BEGIN SOLUTION")
            regions.append(_with_comment(lines, begin, index, path))
            begin = None
    if begin is not None:
        raise MarkerError(f"{path.name}:{begin + 1}: BEGIN SOLUTION is never closed")
    return regions


def _with_comment(lines: list[str], begin: int, end: int, path: Path) -> _Region:
    start = begin
    while start > 0 and lines[start - 1].strip().startswith("#"):
        start -= 1
    match = TODO.search(lines[start]) if start < begin else None
    if match is None:
        raise MarkerError(f"{path.name}:{begin + 1}: a solution region needs a '# TODO N · name: ...' comment above it")
    return _Region(begin, end, start, int(match[1]), match[2].strip())


def strip_solutions(source: str, path: Path = Path("<source>")) -> str:
    """The stub of one solution file: every region replaced by its NotImplementedError."""
    lines = source.splitlines(keepends=True)
    out, position = [], 0
    for region in _regions(lines, path):
        indent = lines[region.begin][: len(lines[region.begin]) - len(lines[region.begin].lstrip())]
        out += lines[position : region.begin]
        out.append(f'{indent}raise NotImplementedError("TODO {region.number} · {region.name}: not implemented yet")\n')
        position = region.end + 1
    out += lines[position:]
    return "".join(out)


def _enclosing_functions(source: str) -> dict[int, str]:
    """Map each line number (1-based) inside a def to that def's qualified name."""
    names: dict[int, str] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for line in range(child.lineno, (child.end_lineno or child.lineno) + 1):
                    names[line] = f"{prefix}{child.name}"

    visit(ast.parse(source), "")
    return names


def todos(solutions: Path = SOLUTIONS) -> list[Todo]:
    """Every task of the week, in TODO order, read from the solution markers."""
    found = []
    for path in sorted(solutions.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines(keepends=True)
        functions = _enclosing_functions(source)
        for region in _regions(lines, path):
            if region.begin + 1 not in functions:
                raise MarkerError(f"{path.name}:{region.begin + 1}: a solution region must sit inside a function")
            comment = "".join(
                line.strip().lstrip("#").strip() + " " for line in lines[region.comment_start : region.begin]
            )
            solution = "".join(lines[region.begin + 1 : region.end])
            found.append(
                Todo(region.number, region.name, path.stem, functions[region.begin + 1], comment.strip(), solution)
            )
    numbers = [todo.number for todo in found]
    if len(set(numbers)) != len(numbers):
        raise MarkerError(f"TODO numbers repeat: {sorted(numbers)}")
    return sorted(found, key=lambda todo: todo.number)


def generate(solutions: Path = SOLUTIONS) -> dict[str, str]:
    """File name -> stub text for every module of `solutions/`."""
    return {
        path.name: strip_solutions(path.read_text(encoding="utf-8"), path) for path in sorted(solutions.glob("*.py"))
    }


def write_exercises(solutions: Path = SOLUTIONS, exercises: Path = EXERCISES) -> list[str]:
    """Write the stubs; remove stale modules. Returns the names of the files changed."""
    exercises.mkdir(parents=True, exist_ok=True)
    wanted = generate(solutions)
    changed = []
    for name, text in wanted.items():
        target = exercises / name
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
            changed.append(name)
    for stale in exercises.glob("*.py"):
        if stale.name not in wanted:
            stale.unlink()
            changed.append(stale.name)
    return changed


def differences(solutions: Path = SOLUTIONS, exercises: Path = EXERCISES) -> list[str]:
    """The exercise modules that are not exactly what the generator produces."""
    wanted = generate(solutions)
    present = {path.name for path in exercises.glob("*.py")}
    problems = [f"{name}: missing" for name in sorted(set(wanted) - present)]
    problems += [f"{name}: not in solutions/" for name in sorted(present - set(wanted))]
    problems += [
        f"{name}: differs from the generated stub"
        for name, text in wanted.items()
        if name in present and (exercises / name).read_bytes() != text.encode("utf-8")
    ]
    return problems

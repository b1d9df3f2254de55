"""The single source: strip the solution regions of `solutions/` into `exercises/`.

Each answer in `solutions/*.py` sits between `### BEGIN SOLUTION` and
`### END SOLUTION`, right after a comment that names the task:

    # TODO · recurrence loop: what to do ...
    ### BEGIN SOLUTION
    ...the reference...
    ### END SOLUTION

A TODO is known by its function (its record's key, autograder/todos/), never by a position: its
number is its place in the week, counted over MODULES in order, and written by the generator. The
stub numbers the comment and replaces the region with one
`raise NotImplementedError("TODO 1 · recurrence loop: not implemented yet")`.
Everything else (given code, imports, docstrings) is copied byte for byte; a new TODO goes beside its
sibling and the ones after it are numbered again, in the stubs, by `autograde stubs`.
"""

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from autograder.locations import EXERCISES, SOLUTIONS

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
TODO = re.compile(r"#\s*TODO · ([^:]+):")  # a solution's marker names the task; the generator numbers it
NUMBERED = re.compile(r"#\s*TODO \d+ ·")  # a number written by hand: refused, it is the generator's to write
# The week's modules in the order of its lessons: the TODOs are numbered over them in this order.
MODULES = ("recurrence", "padding", "initialisation", "language_model", "classifier", "baseline")


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
    if start < begin and NUMBERED.search(lines[start]):
        raise MarkerError(
            f"{path.name}:{start + 1}: write '# TODO · name: ...' without a number: the generator numbers the TODOs"
        )
    match = TODO.search(lines[start]) if start < begin else None
    if match is None:
        raise MarkerError(f"{path.name}:{begin + 1}: a solution region needs a '# TODO · name: ...' comment above it")
    return _Region(begin, end, start, match[1].strip())


def strip_solutions(source: str, path: Path = Path("<source>"), first: int = 1) -> str:
    """The stub of one solution file whose first TODO is number `first`: every TODO comment numbered, every
    region replaced by its NotImplementedError."""
    lines = numbered(source, path, first).splitlines(keepends=True)
    out, position = [], 0
    for number, region in enumerate(_regions(source.splitlines(keepends=True), path), first):
        indent = lines[region.begin][: len(lines[region.begin]) - len(lines[region.begin].lstrip())]
        out += lines[position : region.begin]
        out.append(f'{indent}raise NotImplementedError("TODO {number} · {region.name}: not implemented yet")\n')
        position = region.end + 1
    out += lines[position:]
    return "".join(out)


def numbered(source: str, path: Path = Path("<source>"), first: int = 1) -> str:
    """The solution file with its TODO comments numbered from `first` ("# TODO 2 · LSTM step: ..."), as the
    stubs and the notebooks show them."""
    lines = source.splitlines(keepends=True)
    for number, region in enumerate(_regions(lines, path), first):
        lines[region.comment_start] = TODO.sub(f"# TODO {number} · \\1:", lines[region.comment_start], count=1)
    return "".join(lines)


def firsts(solutions: Path = SOLUTIONS) -> dict[str, int]:
    """Each solution file's name -> the number of its first TODO (the week's order: MODULES)."""
    counts = {
        path.stem: len(_regions(path.read_text(encoding="utf-8").splitlines(), path)) for path in _files(solutions)
    }
    stray = sorted(name for name, count in counts.items() if count and name not in MODULES)
    if stray:
        raise MarkerError(f"{stray[0]}.py has TODOs but is not in stubs.MODULES: add it there, in the week's order")
    found, number = {}, 1
    for name in [*(m for m in MODULES if m in counts), *(n for n in counts if n not in MODULES)]:
        found[f"{name}.py"], number = number, number + counts[name]
    return found


def _files(solutions: Path) -> list[Path]:
    return sorted(solutions.glob("*.py"))


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
    """Every task of the week, in TODO order (MODULES, then each file's order), read from the solution markers."""
    found, numbers = [], firsts(solutions)
    for path in _files(solutions):
        first = numbers[path.name]
        source = path.read_text(encoding="utf-8")
        lines = numbered(source, path, first).splitlines(keepends=True)
        functions = _enclosing_functions(source)
        for number, region in enumerate(_regions(source.splitlines(keepends=True), path), first):
            if region.begin + 1 not in functions:
                raise MarkerError(f"{path.name}:{region.begin + 1}: a solution region must sit inside a function")
            comment = "".join(
                line.strip().lstrip("#").strip() + " " for line in lines[region.comment_start : region.begin]
            )
            solution = "".join(lines[region.begin + 1 : region.end])
            found.append(Todo(number, region.name, path.stem, functions[region.begin + 1], comment.strip(), solution))
    return sorted(found, key=lambda todo: todo.number)


def generate(solutions: Path = SOLUTIONS) -> dict[str, str]:
    """File name -> stub text for every module of `solutions/`."""
    numbers = firsts(solutions)
    return {
        path.name: strip_solutions(path.read_text(encoding="utf-8"), path, numbers[path.name])
        for path in _files(solutions)
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

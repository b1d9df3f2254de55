"""What each author wrote in the week's TODOs, read as data: function by function, with the helpers it calls.

A student's files are hostile: each is read as text (a regular file, never through a symbolic link, at
most `Limits.similarity_kb`) and parsed with `ast`; nothing is imported or run. A module that cannot be
read or parsed costs that module's comparison only, and is named in `Work.unread`. The stubs' text
(signatures, docstrings, comments, given code) is never evidence: every fingerprint of the stub modules
is taken out of every author's.

A module's cost is its size, whatever its characters: the parse and the walks are linear, a line's
byte-to-character table is made once, and each TODO (with its helpers) is hashed up to
`Limits.similarity_nodes` syntax nodes; past them it is compared in part, its text kept up to where the
comparison stopped, and `Work.cut` says so.
"""

import ast
import os
import re
import stat
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path

import numpy as np

from autograder import stubs
from autograder.locations import SOLUTIONS
from autograder.roster.grade_all import students
from autograder.similarity.fingerprints import Exhausted, Hasher, Place, Prints, imported_names
from autograder.similarity.records import Author, AuthorKind, Cut, Span

SOLUTIONS_LABEL = "solutions"
LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")
Definition = ast.FunctionDef | ast.AsyncFunctionDef
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass
class Work:
    """One author's functions: the text shown for each, and its fingerprints (hash -> spans in that text)."""

    author: Author
    prints: dict[str, dict[int, tuple[Span, ...]]]
    unread: list[str] = field(default_factory=list)  # "recurrence.py: a syntax error"
    cut: list[Cut] = field(default_factory=list)  # the functions compared in part


@dataclass(frozen=True)
class Shown:
    """One TODO as compared: the text shown (cut where the comparison stopped), its fingerprints' spans in it,
    and the length of the whole text (the TODO and its helpers)."""

    text: str
    prints: dict[int, tuple[Span, ...]]
    length: int


@dataclass(frozen=True)
class Week:
    """The week's TODO functions by module, and the fingerprints of the stubs (never evidence)."""

    functions: dict[str, tuple[str, ...]]  # "recurrence" -> ("rnn_forward", "lstm_step")
    given: frozenset[int]
    limit: int  # bytes read of a module at most
    nodes: int  # syntax nodes of a TODO (with its helpers) compared at most

    @classmethod
    def load(cls, limit: int, nodes: int, solutions: Path = SOLUTIONS) -> "Week":
        functions: dict[str, tuple[str, ...]] = {}
        for todo in stubs.todos(solutions):
            functions[todo.module] = (*functions.get(todo.module, ()), todo.function)
        given: set[int] = set()
        for text in stubs.generate(solutions).values():
            tree = ast.parse(text)
            prints = Prints()
            Hasher(imported_names(tree))._block(tree.body, prints)
            given |= prints.places.keys()
        return cls(functions, frozenset(given), limit, nodes)


def read_bounded(path: Path, limit: int) -> str:
    """A file's text, refused (OSError, ValueError) when it is a link, not a regular file, or too long."""
    if not stat.S_ISREG(os.lstat(path).st_mode):
        raise ValueError("not a regular file")
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(descriptor, "rb") as file:
        data = file.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"longer than {limit // 1024} KB")
    return data.decode("utf-8")


def authors_of(roster: Path) -> list[Path]:
    """The roster's student folders, as grade-all lists them, less symbolic links."""
    return [path for path in students(roster) if not path.is_symlink()]


def holds_modules(folder: Path, week: Week) -> bool:
    """Whether a folder is one submission (exercises/, or the week's modules at its top), not a roster."""
    return (folder / "exercises").is_dir() or any((folder / f"{module}.py").is_file() for module in week.functions)


def read_work(folder: Path, key: str, kind: AuthorKind, label: str, week: Week) -> Work:
    """An author's Work from a folder holding exercises/ (or the week's modules directly)."""
    modules = folder / "exercises" if (folder / "exercises").is_dir() else folder
    work = Work(Author(key, kind, label, {}), {})
    for module, functions in week.functions.items():
        try:
            if modules.is_symlink():
                raise ValueError("exercises/ is a symbolic link")
            source = read_bounded(modules / f"{module}.py", week.limit)
            found = module_functions(source, module, functions, week)
        except FileNotFoundError:
            continue
        except Exception as error:  # hostile text: whatever it makes fail costs this module only, never the run
            work.unread.append(f"{module}.py: {type(error).__name__}: {error}"[:200])
            continue
        for name, shown in found.items():
            work.author.functions[name], work.prints[name] = shown.text, shown.prints
            if len(shown.text) < shown.length:
                work.cut.append(Cut(key, name, len(shown.text), shown.length))
    return work


def module_functions(source: str, module: str, functions: tuple[str, ...], week: Week) -> dict[str, Shown]:
    """Each TODO function of one module that the author wrote, as compared."""
    tree = ast.parse(source)
    lines = Lines(source)
    hasher = Hasher(imported_names(tree))
    found = {}
    for function in functions:
        scope, node = _find(tree, function)
        if node is None:
            continue
        parts = [node, *_helpers(node, scope, {function.split(".")[-1] for function in functions})]
        hasher.allow(week.nodes)
        shown = _shown(parts, lines, hasher, week.given)
        if shown.prints or len(shown.text) < shown.length:
            found[f"{module}.{function}"] = shown
    return found


def _find(tree: ast.Module, qualified: str) -> tuple[list[ast.stmt], Definition | None]:
    """The last definition of "f" or "Class.f" (the one Python keeps), and the body it sits in."""
    *classes, function = qualified.split(".")
    scope = tree.body
    for name in classes:
        found = _last(scope, (ast.ClassDef,), name)
        if found is None:
            return scope, None
        scope = found.body
    return scope, _last(scope, DEFINITIONS, function)


def _last(scope: list[ast.stmt], kinds: tuple[type, ...], name: str) -> ast.AST | None:
    return next((node for node in reversed(scope) if isinstance(node, kinds) and node.name == name), None)


def _helpers(node: Definition, scope: list[ast.stmt], todos: set[str]) -> list[Definition]:
    """The functions of the same scope the TODO calls, directly or through one another (never another TODO)."""
    defined = {child.name: child for child in scope if isinstance(child, DEFINITIONS)}
    found, queue = {}, [node]
    while queue:
        for called in _calls(queue.pop()):
            if called in defined and called not in todos and called not in found:
                found[called] = defined[called]
                queue.append(defined[called])
    return list(found.values())


def _calls(node: Definition) -> set[str]:
    """Names a function calls as `f(...)` or `self.f(...)`."""
    names = set()
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            if isinstance(call.func, ast.Name):
                names.add(call.func.id)
            elif isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name):
                names.add(call.func.attr)
    return names


def _shown(parts: list[Definition], lines: "Lines", hasher: Hasher, given: frozenset[int]) -> Shown:
    """The text shown for a TODO (its definition, then each helper's) and its fingerprints' spans in it; once the
    hasher's budget runs out, the rest is neither hashed nor kept, only counted."""
    texts: list[str] = []
    spans: dict[int, list[Span]] = {}
    length, cut = 0, None
    for part in parts:
        start, end = lines.whole(min([part.lineno] + [d.lineno for d in part.decorator_list]), part.end_lineno)
        base = length + (2 if length else 0)  # where the part begins in the text shown, after a blank line
        length = base + end - start
        if cut is not None:
            continue
        prints = Prints()
        try:
            hasher.function(part, prints)
        except Exhausted:  # the prints added so far are whole subtrees: they stand
            ends = [lines.offset(place, end=True) for places in prints.places.values() for place in places]
            cut = base + max(ends) - start if ends else max(base - 2, 0)  # or: the text before this part
        texts.append(lines.source[start:end])
        shift = base - start  # from the source's offsets to the text shown's
        for digest, places in prints.places.items():
            if digest not in given:
                spans.setdefault(digest, []).extend(
                    Span(lines.offset(p) + shift, lines.offset(p, end=True) + shift) for p in places
                )
    text = "\n\n".join(texts)[:cut]
    return Shown(text, {digest: tuple(found) for digest, found in spans.items()}, length)


class Lines:
    """A source's lines, to turn ast's places (UTF-8 columns) into character offsets.

    Linear in the source: a line that is not ASCII gets its byte-to-character table once, the first time a
    place on it is asked for (re-encoding the line for each place made a long line's cost its square)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines = LINE.findall(source)  # ast's lines: str.splitlines also splits at \x0c, \u2028, ...
        self.starts = list(accumulate(map(len, self.lines), initial=0))
        self.tables: dict[int, np.ndarray] = {}  # line (1-based) -> characters before each of its byte offsets

    def whole(self, first: int, last: int | None) -> tuple[int, int]:
        """The offsets of lines first..last (1-based), the last line's end of line left out."""
        last = min(last or first, len(self.lines))
        return self.starts[first - 1], self.starts[last - 1] + len(self.lines[last - 1].rstrip("\r\n"))

    def offset(self, place: Place, end: bool = False) -> int:
        """The character offset of a place's start (or its end)."""
        line, column = (place.end_line, place.end_column) if end else (place.line, place.column)
        text = self.lines[line - 1]
        if text.isascii():  # O(1) in CPython: a flag of the string
            return self.starts[line - 1] + column
        if line not in self.tables:
            self.tables[line] = characters_before(text)
        return self.starts[line - 1] + int(self.tables[line][column])


def characters_before(line: str) -> np.ndarray:
    """For each UTF-8 byte offset of `line` (its end too), how many characters come before it: one pass."""
    data = np.frombuffer(line.encode(), np.uint8)
    firsts = (data & 0xC0) != 0x80  # a character's first byte: not a continuation byte 10xxxxxx
    return np.concatenate(([0], np.cumsum(firsts)))

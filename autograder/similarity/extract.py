"""What each author wrote in the week's TODOs, read as data: function by function, with the helpers it calls.

A student's files are hostile: each is read as text (a regular file, never through a symbolic link, at
most `Limits.similarity_kb`) and parsed with `ast`; nothing is imported or run. A module that cannot be
read or parsed costs that module's comparison only, and is named in `Work.unread`. The stubs' text
(signatures, docstrings, comments, given code) is never evidence: every fingerprint of the stub modules
is taken out of every author's.
"""

import ast
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from autograder import stubs
from autograder.locations import SOLUTIONS
from autograder.roster.grade_all import students
from autograder.similarity.fingerprints import Hasher, Place, Prints, imported_names
from autograder.similarity.records import Author, AuthorKind, Span

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


@dataclass(frozen=True)
class Week:
    """The week's TODO functions by module, and the fingerprints of the stubs (never evidence)."""

    functions: dict[str, tuple[str, ...]]  # "recurrence" -> ("rnn_forward", "lstm_step")
    given: frozenset[int]
    limit: int  # bytes read of a module at most

    @classmethod
    def load(cls, limit: int, solutions: Path = SOLUTIONS) -> "Week":
        functions: dict[str, tuple[str, ...]] = {}
        for todo in stubs.todos(solutions):
            functions[todo.module] = (*functions.get(todo.module, ()), todo.function)
        given: set[int] = set()
        for text in stubs.generate(solutions).values():
            tree = ast.parse(text)
            prints = Prints()
            Hasher(imported_names(tree))._block(tree.body, prints)
            given |= prints.places.keys()
        return cls(functions, frozenset(given), limit)


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
    texts: dict[str, str] = {}
    prints: dict[str, dict[int, tuple[Span, ...]]] = {}
    unread = []
    for module, functions in week.functions.items():
        try:
            if modules.is_symlink():
                raise ValueError("exercises/ is a symbolic link")
            source = read_bounded(modules / f"{module}.py", week.limit)
            found = module_functions(source, module, functions, week.given)
        except FileNotFoundError:
            continue
        except Exception as error:  # hostile text: whatever it makes fail costs this module only, never the run
            unread.append(f"{module}.py: {type(error).__name__}: {error}"[:200])
            continue
        for name, (text, spans) in found.items():
            texts[name], prints[name] = text, spans
    return Work(Author(key, kind, label, texts), prints, unread)


def module_functions(
    source: str, module: str, functions: tuple[str, ...], given: frozenset[int]
) -> dict[str, tuple[str, dict[int, tuple[Span, ...]]]]:
    """Each TODO function of one module that the author wrote: its shown text and its fingerprints."""
    tree = ast.parse(source)
    lines = Lines(source)
    hasher = Hasher(imported_names(tree))
    found = {}
    for function in functions:
        scope, node = _find(tree, function)
        if node is None:
            continue
        parts = [node, *_helpers(node, scope, {function.split(".")[-1] for function in functions})]
        text, spans = _shown(parts, lines, hasher, given)
        if spans:
            found[f"{module}.{function}"] = (text, spans)
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


def _shown(
    parts: list[Definition], lines: "Lines", hasher: Hasher, given: frozenset[int]
) -> tuple[str, dict[int, tuple[Span, ...]]]:
    """The text shown for a TODO (its definition, then each helper's) and its fingerprints' spans in it."""
    text, spans = "", {}
    for part in parts:
        start, end = lines.whole(min([part.lineno] + [d.lineno for d in part.decorator_list]), part.end_lineno)
        base = len(text) + (2 if text else 0) - start
        text += ("\n\n" if text else "") + lines.source[start:end]
        prints = Prints()
        hasher.function(part, prints)
        for digest, places in prints.places.items():
            if digest not in given:
                shifted = (Span(lines.offset(p) + base, lines.offset(p, end=True) + base) for p in places)
                spans[digest] = (*spans.get(digest, ()), *shifted)
    return text, spans


class Lines:
    """A source's lines, to turn ast's places (UTF-8 columns) into character offsets."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines = LINE.findall(source)  # ast's lines: str.splitlines also splits at \x0c, \u2028, ...
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def whole(self, first: int, last: int | None) -> tuple[int, int]:
        """The offsets of lines first..last (1-based), the last line's end of line left out."""
        last = min(last or first, len(self.lines))
        return self.starts[first - 1], self.starts[last - 1] + len(self.lines[last - 1].rstrip("\r\n"))

    def offset(self, place: Place, end: bool = False) -> int:
        """The character offset of a place's start (or its end)."""
        line, column = (place.end_line, place.end_column) if end else (place.line, place.column)
        text = self.lines[line - 1]
        return self.starts[line - 1] + (
            column if text.isascii() else len(text.encode()[:column].decode(errors="ignore"))
        )

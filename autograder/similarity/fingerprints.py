"""Fingerprints of code: a hash for every subtree of its `ast`, with the names and the layout taken out.

Two passages get the same fingerprint when they are the same code up to what a copier changes freely:
the names they chose (every local name, argument and helper is `V`), layout, comments and docstrings,
type annotations, `x += y` written `x = x + y`, and code that can never run (after a `return`, under
`if False:`). What they cannot change stays: the library they call (`torch.gather`, `.chunk`, `dim=1`:
an imported name is read as the module it stands for, so `F.pad` and `functional.pad` are alike),
builtins, operators and constants. A fingerprint is a subtree of at least `MIN_NODES` nodes, so the
bag of a function's fingerprints does not depend on the order of its statements, and a loop's body is
the same evidence under `for` or `while`, in a comprehension or a loop, inline or in a helper.
Linear in the code: each node is hashed once, from its children's hashes; `Hasher.allow` bounds the nodes
hashed (past the budget `Exhausted` is raised, and the fingerprints added so far stand: each is a whole subtree).
"""

import ast
import builtins
import hashlib
import math
from dataclasses import dataclass, field

MIN_NODES = 6  # smaller subtrees (`x[:, t]`, `h.shape[0]`) are written alike by everybody
BUILTINS = frozenset(dir(builtins))
SKIPPED_FIELDS = frozenset({"ctx", "type_comment", "annotation", "returns", "decorator_list", "type_params"})
_MASK = (1 << 63) - 1


@dataclass(frozen=True)
class Place:
    """Where a passage is in a file: ast's lines (1-based) and columns (UTF-8 bytes)."""

    line: int
    column: int
    end_line: int
    end_column: int


@dataclass
class Prints:
    """A function's fingerprints: each hash and the places it occurs."""

    places: dict[int, list[Place]] = field(default_factory=dict)

    def add(self, digest: int, place: Place) -> None:
        self.places.setdefault(digest, []).append(place)

    def without(self, common: set[int]) -> "Prints":
        return Prints({key: value for key, value in self.places.items() if key not in common})


_LABELS: dict[str, int] = {}


def _label(text: str) -> int:
    """A stable hash of a label (str hashes change between processes; these must not)."""
    if text not in _LABELS:
        _LABELS[text] = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big") & _MASK
    return _LABELS[text]


def imported_names(tree: ast.Module) -> dict[str, str]:
    """Each name a module's imports bind, and the module or object it stands for."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module or ''}.{alias.name}"
    return names


def _dead(test: ast.expr) -> bool:
    """`if False:`, `while 0:`: a branch that never runs."""
    return isinstance(test, ast.Constant) and not test.value


class Exhausted(Exception):
    """The hasher's budget of nodes ran out: the rest of the code is not hashed."""


class Hasher:
    """Hashes the subtrees of one module's functions into their Prints, at most `allow`'s nodes."""

    def __init__(self, imports: dict[str, str]) -> None:
        self.imports = imports
        self.left = math.inf  # nodes it may still hash

    def allow(self, nodes: int) -> None:
        """Hash at most `nodes` more nodes: past them, `Exhausted`."""
        self.left = nodes

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, prints: Prints) -> None:
        """Add a function's body to `prints`: its name, arguments, docstring and annotations are not evidence."""
        self._block(node.body, prints)

    def _block(self, statements: list[ast.stmt], prints: Prints) -> tuple[int, int]:
        digests, size = [_label("block")], 1
        for statement in statements:
            if _docstring(statement) or isinstance(statement, ast.Pass):
                continue
            digest, count = self._node(statement, prints)
            digests.append(digest)
            size += count
            if isinstance(statement, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
                break  # what follows never runs
        return hash(tuple(digests)) & _MASK, size

    def _node(self, node: ast.AST, prints: Prints) -> tuple[int, int]:
        digest, size = self._digest(node, prints)
        if size >= MIN_NODES and isinstance(node, (ast.expr, ast.stmt)):
            prints.add(digest, Place(node.lineno, node.col_offset, node.end_lineno or 0, node.end_col_offset or 0))
        return digest, size

    def _digest(self, node: ast.AST, prints: Prints) -> tuple[int, int]:
        self.left -= 1
        if self.left < 0:
            raise Exhausted
        special = self._special(node, prints)
        if special is not None:
            return special
        digests, size = [_label(type(node).__name__)], 1
        for name, value in ast.iter_fields(node):
            if name in SKIPPED_FIELDS:
                continue
            digest, count = self._field(value, prints)
            digests.append(digest)
            size += count
        return hash(tuple(digests)) & _MASK, size

    def _field(self, value: object, prints: Prints) -> tuple[int, int]:
        if isinstance(value, list):
            if value and isinstance(value[0], ast.stmt):
                return self._block(value, prints)
            parts = [
                self._node(item, prints) if isinstance(item, ast.AST) else (_label(repr(item)), 0) for item in value
            ]
            return hash(tuple(digest for digest, _ in parts)) & _MASK, sum(count for _, count in parts)
        if isinstance(value, ast.AST):
            return self._node(value, prints)
        return _label(repr(value)), 0

    def _special(self, node: ast.AST, prints: Prints) -> tuple[int, int] | None:
        """The nodes normalised: names, constants, nested functions, `+=`, dead branches."""
        if isinstance(node, ast.Name):
            return _label(self._name(node.id)), 1
        if isinstance(node, ast.arg):
            return _label("V"), 1
        if isinstance(node, ast.Constant):
            return _label("S" if isinstance(node.value, (str, bytes)) else repr(node.value)), 1
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return self._block(node.body, prints)
        if isinstance(node, ast.AugAssign):
            value = ast.copy_location(ast.BinOp(left=node.target, op=node.op, right=node.value), node)
            return self._digest(ast.copy_location(ast.Assign(targets=[node.target], value=value), node), prints)
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            return self._digest(ast.copy_location(ast.Assign(targets=[node.target], value=node.value), node), prints)
        if isinstance(node, (ast.If, ast.While)) and _dead(node.test):
            return self._block(node.orelse, prints)
        return None

    def _name(self, name: str) -> str:
        if name in self.imports:
            return "import:" + self.imports[name]
        return "builtin:" + name if name in BUILTINS else "V"


def _docstring(statement: ast.stmt) -> bool:
    """A bare string: a docstring, or text the student left as a comment."""
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)

"""Integrity notes for the instructor: where a submission's modules reach for the grader or the machine.

A static reading of the modules grading copied, with Python's `ast`: nothing is imported or run.
Each note names the module, the line, what kind of reach it is and the line's text (shown inert).
A note is never a penalty and never reaches the student: grade-all writes the notes into
integrity.json beside results.json, and only the class report shows them ("Look at this code").

The source is hostile, and nothing in it fails the grading: a module Python cannot parse (a syntax
error, undecodable bytes, nesting past the parser's stack) has no note, since none of it can run
either; the bytes analysed (beyond them a module is "not analysed", and said so), the notes kept
and the text shown of a line are bounded.
"""

import ast
import io
import json
import re
import tokenize
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path

from autograder.text import escaped

FILE = "integrity.json"  # beside results.json in a grading's folder (grade-all's)
# every bound of the analysis, in one place
MAX_BYTES = 1 << 18  # source analysed per submission, in all: 256 KiB (the reference's modules: 26 KiB)
MAX_NOTES = 200  # notes kept per submission; `more` counts the rest
MAX_LINE = 200  # characters shown of a line
MAX_FILE_BYTES = 4 << 20  # integrity.json read back by the class report (what is written is far less)


class Kind(Enum):
    """What a line reaches for (integrity.json's `kind`: these words)."""

    GRADER = "grader"
    FRAMES = "frames"
    PATCH = "patch"
    PROC = "proc"
    PROCESS = "process"
    NETWORK = "network"
    FILES = "files"
    DYNAMIC = "dynamic"
    MODEL = "model"

    @property
    def describe(self) -> str:
        return DESCRIBE[self]


ORDER = {kind: index for index, kind in enumerate(Kind)}
DESCRIBE = {
    Kind.GRADER: "names the grader's own code (its runtime, its sandbox, autograder, the reference solutions)",
    Kind.FRAMES: "walks frames, the call stack or the interpreter's objects",
    Kind.PATCH: "patches a module it imported (torch, nn, builtins, the grader's) or the import system",
    Kind.PROC: "reads /proc",
    Kind.PROCESS: "reaches processes or the machine (fork, signals, resource limits, ctypes, subprocesses)",
    Kind.NETWORK: "reaches for the network",
    Kind.FILES: "names a file outside its folder (an absolute path, or ..)",
    Kind.DYNAMIC: "runs code it builds, or imports a module by a computed name (exec, eval, __import__)",
    Kind.MODEL: "a model that may not use what it learns (a term times zero, a branch on self.training, "
    "a method replaced after its class)",
}

# the grader's top-level modules a submission never needs: the worker's runtime and sandbox packages
# (sandbox.layers.RUNTIME_PACKAGE, sandbox.layers.IN_WORKER_PACKAGE), the grader, the reference
GRADER_MODULES = frozenset({"autograde_runtime", "autograde_sandbox", "autograder", "solutions"})
# modules whose import alone reaches processes, the machine or the network
PROCESS_MODULES = frozenset(
    {"ctypes", "_ctypes", "cffi", "resource", "signal", "subprocess", "_posixsubprocess", "multiprocessing", "pty"}
    | {"posix", "ptrace", "psutil", "faulthandler", "_signal"}
)
NETWORK_MODULES = frozenset(
    {"socket", "_socket", "ssl", "http", "urllib", "requests", "httpx", "aiohttp", "ftplib", "smtplib", "telnetlib"}
)
FRAME_CALLS = frozenset(
    {"sys._getframe", "sys._current_frames", "sys.settrace", "sys.setprofile", "threading.settrace"}
    | {"inspect.stack", "inspect.currentframe", "inspect.getouterframes", "inspect.trace", "inspect.getinnerframes"}
    | {"gc.get_objects", "gc.get_referrers", "gc.get_referents", "traceback.walk_stack", "traceback.walk_tb"}
)
FRAME_ATTRIBUTES = frozenset(
    {"f_back", "f_globals", "f_locals", "f_builtins", "tb_frame", "tb_next", "gi_frame", "cr_frame", "ag_frame"}
    | {"__globals__", "__subclasses__", "__closure__"}
)
PROCESS_CALLS = frozenset(
    {"os.fork", "os.forkpty", "os.kill", "os.killpg", "os.system", "os.popen", "os._exit", "os.abort"}
    | {"os.setsid", "os.setpgid", "os.setpgrp", "os.nice", "os.setpriority", "os.getppid", "os.pidfd_open"}
    | {"os.sched_setaffinity", "os.sched_setscheduler", "os.sched_setparam", "os.register_at_fork"}
    | {"os.posix_spawn", "os.posix_spawnp", "os.wait", "os.waitpid", "os.setrlimit"}
)
PROCESS_PREFIXES = ("os.exec", "os.spawn")
DYNAMIC_CALLS = frozenset(
    {"exec", "eval", "compile", "__import__", "importlib.import_module", "importlib.__import__", "importlib.reload"}
    | {"builtins.exec", "builtins.eval", "builtins.compile", "builtins.__import__", "marshal.loads", "pickle.loads"}
    | {"runpy.run_path", "runpy.run_module", "types.FunctionType", "types.CodeType"}
)
PATCH_CALLS = frozenset(
    {"unittest.mock.patch", "unittest.mock.patch.object", "mock.patch", "mock.patch.object"}
    | {"torch.set_default_dtype", "torch.set_default_device", "torch.set_default_tensor_type"}
    | {"torch.set_num_threads", "torch.set_num_interop_threads"}
)
# the import system: a call of any of their methods, or an assignment into them
IMPORT_SYSTEM = frozenset({"sys.modules", "sys.meta_path", "sys.path_hooks", "sys.path", "sys.path_importer_cache"})
MUTATORS = frozenset({"append", "insert", "extend", "update", "pop", "popitem", "setdefault", "remove", "clear"})
MUTATORS |= {"__setitem__", "__delitem__"}
GRADER_NAME = re.compile(rf"({'|'.join(sorted(GRADER_MODULES))})(\.[\w.]*)?")
PROC_PATH = re.compile(r"/proc(/|$)")
OUTSIDE_PATH = re.compile(r"(^(/|~/)[\w.@-])|((^|/)\.\.(/|$))")


@dataclass(frozen=True)
class Note:
    """One line of a submission's module that reaches for the grader or the machine."""

    module: str  # "padding.py"
    line: int
    kind: Kind
    text: str  # the line, stripped, bounded and escaped: inert wherever it is shown
    detail: str  # what was matched on it: "sys._getframe", "import ctypes", "torch.allclose = ..."

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "kind": self.kind.value}


@dataclass
class Notes:
    """What the analysis found in one submission."""

    notes: list[Note] = field(default_factory=list)
    more: int = 0  # notes beyond MAX_NOTES, not kept
    not_analysed: dict[str, str] = field(default_factory=dict)  # module -> why (past the bound): it may run

    def as_dict(self) -> dict[str, object]:
        return {
            "notes": [note.as_dict() for note in self.notes],
            "more": self.more,
            "not_analysed": dict(self.not_analysed),
        }


def analyse_folder(folder: Path) -> Notes:
    """The notes of every `*.py` regular file directly in `folder` (the grading's copy of the package)."""
    return analyse(sources(folder))


def sources(folder: Path) -> dict[str, bytes]:
    """Each `*.py` regular file directly in `folder`, read up to the bound (what `analyse` reads)."""
    found = {}
    for path in sorted(folder.glob("*.py")):
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as handle:
                found[path.name] = handle.read(MAX_BYTES + 1)
    return found


def analyse(sources: dict[str, bytes]) -> Notes:
    """The notes of each module (name -> its bytes), in module order, bounded: never raises on any source."""
    found, budget = Notes(), MAX_BYTES
    for module, data in sources.items():
        if len(data) > budget:
            found.not_analysed[module] = f"over the {MAX_BYTES >> 10} KiB of source analysed per submission"
            continue
        budget -= len(data)
        try:
            notes = list(_module_notes(module, data))
        except _Unparsable:
            continue  # Python cannot import it either: none of it runs
        except Exception as error:  # RecursionError, MemoryError, a defect here: never the grading's cost
            found.not_analysed[module] = f"the analysis failed ({type(error).__name__})"
            continue
        kept = max(0, MAX_NOTES - len(found.notes))
        found.notes += notes[:kept]
        found.more += len(notes) - len(notes[:kept])
    return found


class _Unparsable(Exception):
    """A module Python cannot parse (a syntax error, undecodable, nested past the parser's stack)."""


def _module_notes(module: str, data: bytes) -> Iterator[Note]:
    tree, lines = _parse(data)
    seen = set()
    for line, kind, detail in sorted(_findings(tree), key=lambda found: (found[0], ORDER[found[1]])):
        if (line, kind) not in seen:  # one note per line and kind
            seen.add((line, kind))
            yield Note(module, line, kind, _shown(lines, line), escaped(detail[:MAX_LINE]))


def _parse(data: bytes) -> tuple[ast.AST, list[str]]:
    """The module's tree and its lines, as Python would read them (its coding cookie honoured)."""
    try:
        encoding = tokenize.detect_encoding(io.BytesIO(data).readline)[0]
        text = data.decode(encoding)
        return ast.parse(text), text.splitlines()
    # a syntax error, null bytes, an unknown or wrong encoding, nesting too deep for the parser
    except (SyntaxError, ValueError, LookupError, RecursionError, MemoryError):
        raise _Unparsable from None


def _shown(lines: list[str], line: int) -> str:
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return escaped(text[:MAX_LINE] + ("..." if len(text) > MAX_LINE else ""))


@dataclass(frozen=True)
class _Known:
    """What the whole module says about a node: the names its imports bind, the strings that are not code,
    the classes it defines at its top level."""

    aliases: dict[str, str]
    skipped: set[int]
    classes: frozenset[str]


def _findings(tree: ast.AST) -> Iterator[tuple[int, Kind, str]]:
    """(line, kind, what) for every reach found, in walking order."""
    nodes = list(ast.walk(tree))  # breadth first, without recursion: a tree can be deeper than Python's stack
    body = getattr(tree, "body", [])
    classes = frozenset(node.name for node in body if isinstance(node, ast.ClassDef))
    known = _Known(_aliases(nodes), _not_code(nodes), classes)
    for node in nodes:
        line = getattr(node, "lineno", 0)
        for kind, detail in _node_findings(node, known):
            yield line, kind, detail


def _node_findings(node: ast.AST, known: _Known) -> Iterator[tuple[Kind, str]]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield from _imports(node)
    elif isinstance(node, ast.Call):
        yield from _call(node, known)
    elif isinstance(node, ast.Attribute):
        yield from _attribute(node, known.aliases)
    elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
        yield from _patches(node, known)
    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in known.skipped:
        yield from _string(node.value)
    elif isinstance(node, ast.JoinedStr):  # f"/proc/{pid}/cwd": its written parts, each value a placeholder
        written = "".join(part.value if isinstance(part, ast.Constant) else "{}" for part in node.values)
        yield from _string(str(written))
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and (_zero(node.left) or _zero(node.right)):
        yield Kind.MODEL, "a term times zero"  # `0 * self.head.bias`: backward runs, nothing learned is used


def _attribute(node: ast.Attribute, aliases: dict[str, str]) -> Iterator[tuple[Kind, str]]:
    if node.attr in FRAME_ATTRIBUTES:
        yield Kind.FRAMES, f".{node.attr}"
    elif _dotted(node, aliases)[0] == "sys.modules":
        yield Kind.FRAMES, "sys.modules"  # every module loaded, the grader's runtime among them
    elif node.attr == "training" and isinstance(node.value, ast.Name) and node.value.id == "self":
        yield Kind.MODEL, "self.training"  # a model that computes otherwise once evaluated


def _zero(node: ast.AST) -> bool:
    value = node.value if isinstance(node, ast.Constant) else None
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0


def _imports(node: ast.Import | ast.ImportFrom) -> Iterator[tuple[Kind, str]]:
    if isinstance(node, ast.ImportFrom):
        names = [node.module or ""] if node.level == 0 else []
        names += [f"{node.module}.{alias.name}" for alias in node.names if node.level == 0 and node.module]
    else:
        names = [alias.name for alias in node.names]
    for name in names:
        top = name.split(".")[0]
        if top in GRADER_MODULES:
            yield Kind.GRADER, f"import {name}"
        elif top in PROCESS_MODULES or name in PROCESS_CALLS:
            yield Kind.PROCESS, f"import {name}"
        elif top in NETWORK_MODULES:
            yield Kind.NETWORK, f"import {name}"
        elif name in FRAME_CALLS:
            yield Kind.FRAMES, f"import {name}"


def _aliases(nodes: list[ast.AST]) -> dict[str, str]:
    """Each name an import binds anywhere in the module -> what it stands for (`nn` -> `torch.nn`)."""
    found = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                found[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom):
            prefix = "." * node.level + (node.module or "")
            for alias in node.names:
                found[alias.asname or alias.name] = f"{prefix}.{alias.name}" if prefix else alias.name
    return found


def _not_code(nodes: list[ast.AST]) -> set[int]:
    """The ids of the string constants read as a whole elsewhere or not at all: docstrings (one may quote a
    path: it is not code) and the written parts of f-strings (read with their placeholders)."""
    found = set()
    for node in nodes:
        if isinstance(node, ast.JoinedStr):
            found.update(id(part) for part in node.values if isinstance(part, ast.Constant))
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            found.add(id(first.value))
    return found


def _dotted(node: ast.AST, aliases: dict[str, str]) -> tuple[str, bool]:
    """`torch.nn.Module.forward` for an attribute chain, its root resolved through the imports; and
    whether that root is an imported name (or `__builtins__`). ("", False) for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return "", False
    imported = node.id in aliases or node.id == "__builtins__"
    root = "builtins" if node.id == "__builtins__" else aliases.get(node.id, node.id)
    return ".".join([root, *reversed(parts)]), imported


def _call(node: ast.Call, known: _Known) -> Iterator[tuple[Kind, str]]:
    aliases = known.aliases
    name, _ = _dotted(node.func, aliases)
    if name in FRAME_CALLS:
        yield Kind.FRAMES, name
    if name in PROCESS_CALLS or name.startswith(PROCESS_PREFIXES):
        yield Kind.PROCESS, name
    if name in DYNAMIC_CALLS:
        yield Kind.DYNAMIC, name
    owner, _, method = name.rpartition(".")
    if name in PATCH_CALLS or (owner in IMPORT_SYSTEM and method in MUTATORS):
        yield Kind.PATCH, name
    if name in ("setattr", "delattr", "builtins.setattr", "builtins.delattr") and node.args:
        target, imported = _dotted(_container(node.args[0]), aliases)
        if imported or target in IMPORT_SYSTEM:
            yield Kind.PATCH, f"{name}({target}, ...)"
        elif target in known.classes:
            yield Kind.MODEL, f"{name}({target}, ...)"


def _container(node: ast.AST) -> ast.AST:
    """What a subscript indexes (`sys.modules` of `sys.modules["x"]`), else the node itself."""
    while isinstance(node, ast.Subscript):
        node = node.value
    return node


def _patches(node: ast.AST, known: _Known) -> Iterator[tuple[Kind, str]]:
    """An assignment (or del) into an attribute of an imported name, into builtins or the import system;
    or into one of the module's own classes, from outside it (`SequenceClassifier.forward = rule`)."""
    aliases = known.aliases
    targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
    for target in _flattened(targets):
        if isinstance(target, ast.Attribute):
            name, imported = _dotted(target, aliases)
            if imported:
                yield Kind.PATCH, f"{name} = ..."
            elif isinstance(target.value, ast.Name) and target.value.id in known.classes:
                yield Kind.MODEL, f"{name} = ..."
        elif isinstance(target, ast.Subscript):
            name, imported = _dotted(_container(target), aliases)
            if name in IMPORT_SYSTEM or (imported and name.endswith("__dict__")) or name == "builtins":
                yield Kind.PATCH, f"{name}[...] = ..."


def _flattened(targets: list[ast.AST]) -> Iterator[ast.AST]:
    """Each target of an assignment, tuples and lists unpacked (`a.x, b.y = ...`), without recursion."""
    pending = list(targets)
    while pending:
        target = pending.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            pending.extend(target.elts)
        elif isinstance(target, ast.Starred):
            pending.append(target.value)
        else:
            yield target


def _string(value: str) -> Iterator[tuple[Kind, str]]:
    """A string that names the grader's modules, /proc, or a path outside the submission's folder."""
    if GRADER_NAME.fullmatch(value):
        yield Kind.GRADER, repr(value)
    if PROC_PATH.match(value):
        yield Kind.PROC, repr(value[:MAX_LINE])
    elif OUTSIDE_PATH.search(value) and "\n" not in value:
        yield Kind.FILES, repr(value[:MAX_LINE])


def write(notes: Notes, path: Path) -> None:
    """integrity.json: the notes, for the class report only."""
    path.write_text(json.dumps(notes.as_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def read(path: Path) -> Notes:
    """The notes of integrity.json, bounded as written; empty when there is none or it cannot be read as notes."""
    try:
        with path.open("rb") as handle:
            document = json.loads(handle.read(MAX_FILE_BYTES + 1)[:MAX_FILE_BYTES])
        notes = [_note(entry) for entry in document.get("notes", [])[:MAX_NOTES]]
        more = int(document.get("more", 0)) + max(0, len(document.get("notes", [])) - MAX_NOTES)
        not_analysed = {
            str(key): str(value)[:MAX_LINE] for key, value in dict(document.get("not_analysed", {})).items()
        }
    except (OSError, ValueError, TypeError, AttributeError, KeyError):
        return Notes()
    return Notes(notes, more, dict(list(not_analysed.items())[:MAX_NOTES]))


def _note(entry: dict) -> Note:
    line = entry["line"]
    if not isinstance(line, int) or isinstance(line, bool):
        raise TypeError("a note's line is a number")
    text, detail = str(entry["text"])[: 2 * MAX_LINE], str(entry.get("detail", ""))[: 2 * MAX_LINE]
    return Note(str(entry["module"])[:MAX_LINE], line, Kind(entry["kind"]), text, detail)

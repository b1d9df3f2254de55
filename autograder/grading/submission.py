"""A submission read as data: its modules copied and its other files listed, nothing followed, all bounded.

A student controls every path of their submission: names, links, special files, how deep and how
many. Nothing here follows a symbolic link: folders are opened one by one, each relative to its
parent and with O_NOFOLLOW, files with O_NOFOLLOW and then checked by fstat to be the regular file
that was listed, so no link anywhere on the way is taken. A size is checked before a byte is
copied, the modules read are counted, and a listing stops at a depth and a count. What is left out
is recorded with why, for the reports.
"""

import contextlib
import errno
import functools
import os
import stat
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path, PurePosixPath

from autograder.locations import EXERCISES
from autograder.text import escaped

PACKAGE = "exercises"  # the folder of a fork holding the student's modules
# every bound on reading a submission, in one place
MAX_MODULE_BYTES = 1 << 20  # one module of the package
MAX_MODULES = 100  # modules read from one submission (the package has seven)
MAX_DEPTH = 32  # folders deep a listing looks
MAX_ENTRIES = 10_000  # entries a listing looks at, in all
MAX_LISTED = 50  # files a grading names as not read
# the folders tools make in a checkout (a virtual environment, git, caches): counted, never looked into nor named
TOOL_FOLDERS = frozenset(
    {".venv", "venv", ".git", "__pycache__", ".pytest_cache", ".ipynb_checkpoints", ".mypy_cache", ".ruff_cache"}
)
# names that could pass for pytest's hooks or for real packages are never copied
SHADOWING = frozenset(
    {"conftest", "sitecustomize", "usercustomize", "torch", "numpy", "sklearn", "pytest"}
) | frozenset(sys.stdlib_module_names)

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW
_FILE = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | _NOFOLLOW  # a FIFO never blocks


class Why(Enum):
    """Why a file of the submission is not read."""

    NOT_GRADED = "not graded"  # not a module of the package
    LINK = "link"
    SPECIAL = "special"  # a FIFO, a socket, a device
    TOO_BIG = "too big"
    TOO_MANY = "too many"
    SHADOWS = "shadows"
    NOT_A_NAME = "not a module name"
    TOO_DEEP = "too deep"
    UNSAFE_PATH = "unsafe path"  # a zip entry outside the upload (absolute, `..`)
    DUPLICATE = "duplicate"  # a zip's second entry of one name
    UNREADABLE = "unreadable"
    TOOL = "tool folder"  # one of TOOL_FOLDERS: counted apart, never walked


@dataclass(frozen=True)
class LeftOut:
    """One file (or folder) of the submission that was not read."""

    path: str  # relative to the submission, as the file system gave it (undecodable bytes as surrogates)
    why: Why
    size: int = 0  # bytes, when it is too big

    def reason(self) -> str:
        """Why, in the student's terms."""
        if self.why is Why.TOO_BIG:
            return f"it is {_mib(self.size)}, over the {_mib(MAX_MODULE_BYTES)} limit for one module"
        return REASONS[self.why]


REASONS = {
    Why.NOT_GRADED: "not part of the package the grader reads",
    Why.LINK: "it is a symbolic link, and the grader never follows one",
    Why.SPECIAL: "it is not a regular file",
    Why.TOO_MANY: f"it comes after the first {MAX_MODULES} modules, which are all the grader reads",
    Why.SHADOWS: "its name could pass for pytest's conftest or a real package (torch, os, ...): never imported",
    Why.NOT_A_NAME: "its name is not a Python module name",
    Why.TOO_DEEP: f"a folder more than {MAX_DEPTH} levels deep, not looked into",
    Why.UNSAFE_PATH: "its path leads outside the upload (absolute, or with ..)",
    Why.DUPLICATE: "a second entry of the same name in the zip",
    Why.UNREADABLE: "it could not be read",
    Why.TOOL: "a folder tools make (a virtual environment, git, a cache): not looked into",
}


def _mib(size: int) -> str:
    return f"{size / (1 << 20):.1f} MiB" if size % (1 << 20) else f"{size >> 20} MiB"


class SubmissionError(Exception):
    """The package folder cannot be read (missing, or a link); str() says which."""


@dataclass(frozen=True)
class Submission:
    """Where a student's files are: `root`, and the folder of it holding their modules."""

    root: Path
    package: str = PACKAGE  # relative to root; "." for modules uploaded loose
    left_out: tuple[LeftOut, ...] = ()  # what was left out before the files reached root (a zip's entries)

    def relative(self, name: str) -> str:
        """The path of a file of the package, as the reports show it."""
        return name if self.package == "." else f"{self.package}/{name}"

    def in_fork(self, path: str) -> str:
        """A path of the submission as the fork has it (`week07-main/README.md` of an upload: `README.md`)."""
        fork = str(PurePosixPath(self.package).parent) if PurePosixPath(self.package).name == PACKAGE else "."
        return path[len(fork) + 1 :] if fork != "." and path.startswith(f"{fork}/") else path

    def module_of(self, path: str) -> str | None:
        """The module a path of the submission would be (`padding` for exercises/padding.py), else None."""
        prefix = "" if self.package == "." else f"{self.package}/"
        name = path[len(prefix) :] if path.startswith(prefix) else "/"
        return name[:-3] if name.endswith(".py") and "/" not in name else None


@dataclass(frozen=True)
class Module:
    name: str  # "padding.py"
    data: bytes


@dataclass
class Unlisted:
    """What a listing counts but never names: nothing the student meant to be graded."""

    shipped: int = 0  # files of the release itself (README.md, exercises/tests/..., pyproject.toml, ...)
    tools: Counter[str] = field(default_factory=Counter)  # a name of TOOL_FOLDERS -> how many, not looked into

    def __bool__(self) -> bool:
        return bool(self.shipped or self.tools)


@dataclass
class Listing:
    """What a walk found not read, in name order, bounded."""

    entries: list[LeftOut] = field(default_factory=list)
    more: int = 0  # files not read beyond those listed
    cut: bool = False  # the walk stopped at MAX_ENTRIES: there may be more still
    unlisted: Unlisted = field(default_factory=Unlisted)


def open_folder(root: Path, relative: str = ".") -> int:
    """A descriptor of root/relative, each folder on the way opened with O_NOFOLLOW (OSError at a link)."""
    descriptor = os.open(root, _FOLDER)
    for part in PurePosixPath(relative).parts:
        try:
            inner = os.open(part, _FOLDER, dir_fd=descriptor)
        finally:
            os.close(descriptor)
        descriptor = inner
    return descriptor


def open_package(submission: Submission) -> int:
    """The package folder's descriptor; SubmissionError saying what is wrong when there is none to read."""
    where = submission.root if submission.package == "." else submission.root / submission.package
    try:
        return open_folder(submission.root, submission.package)
    except OSError as error:
        shown = escaped(str(where))
        if os.path.islink(where):  # it could point at the reference, which the grader itself can read
            message = f"{shown} is a symbolic link: grading reads only the submission's own files"
            raise SubmissionError(message) from None
        if error.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.lexists(where):
            raise SubmissionError(f"{shown} is not a folder, or lies behind a link") from None
        raise SubmissionError(
            f"{escaped(str(submission.root))} has no {escaped(submission.package)}/ folder: "
            "is it a checkout of the student repository?"
        ) from None


def entries(folder: Path) -> list[tuple[str, int]]:
    """(name, mode) of a folder's entries as they are (links not followed), in name order, bounded."""
    descriptor = open_folder(folder)
    try:
        return _children(descriptor, [MAX_ENTRIES])
    finally:
        os.close(descriptor)


def _children(folder: int, budget: list[int]) -> list[tuple[str, int]]:
    """(name, mode) of a folder's entries, not following links, in name order; each one spends the budget."""
    found = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if budget[0] <= 0:
                break
            budget[0] -= 1
            try:
                found.append((entry.name, entry.stat(follow_symlinks=False).st_mode))
            except OSError:
                found.append((entry.name, 0))
    return sorted(found)


def _kind(mode: int) -> Why:
    if stat.S_ISLNK(mode):
        return Why.LINK
    return Why.NOT_GRADED if stat.S_ISREG(mode) else Why.SPECIAL


def walk(root: Path, budget: list[int]) -> Iterator[LeftOut]:
    """Every entry under `root` but folders, depth first in name order, no link followed: iterative, at
    most MAX_DEPTH folders deep, at most budget[0] entries looked at. A tool's folder (TOOL_FOLDERS: a
    .venv of 10,000 files, its links to python) is one entry, never looked into."""
    top = open_folder(root)
    stack = [(top, "", iter(()))]
    try:
        stack[0] = (top, "", iter(_children(top, budget)))
        while stack:
            folder, prefix, children = stack[-1]
            child = next(children, None)
            if child is None:
                os.close(stack.pop()[0])
                continue
            name, mode = child
            if name in TOOL_FOLDERS:
                yield LeftOut(prefix + name, Why.TOOL)
            elif not stat.S_ISDIR(mode):
                yield LeftOut(prefix + name, _kind(mode))
            elif len(stack) > MAX_DEPTH:
                yield LeftOut(f"{prefix}{name}/", Why.TOO_DEEP)
            else:
                inner = _open_inner(folder, name)
                if inner is None:
                    yield LeftOut(f"{prefix}{name}/", Why.UNREADABLE)
                else:
                    stack.append((inner, f"{prefix}{name}/", iter(_children(inner, budget))))
    finally:
        for folder, _, _ in stack:
            os.close(folder)


def _open_inner(folder: int, name: str) -> int | None:
    try:
        return os.open(name, _FOLDER, dir_fd=folder)
    except OSError:
        return None


def listing(submission: Submission, shipped: frozenset[str] = frozenset()) -> Listing:
    """Every file of the submission that is not one of its package's modules (those say for themselves), but
    the files of the release (`shipped`, as it ships them: regular files) and the tools' folders, only counted."""
    found = Listing()
    budget = [MAX_ENTRIES]
    walked = (entry for entry in walk(submission.root, budget) if submission.module_of(entry.path) is None)
    for entry in [*submission.left_out, *walked]:
        if entry.why is Why.TOOL:
            found.unlisted.tools[PurePosixPath(entry.path).name] += 1
        elif entry.why is Why.NOT_GRADED and submission.in_fork(entry.path) in shipped:
            found.unlisted.shipped += 1
        elif len(found.entries) < MAX_LISTED:
            found.entries.append(entry)
        else:
            found.more += 1
    found.cut = budget[0] <= 0
    return found


def modules(submission: Submission) -> Iterator[Module | LeftOut]:
    """Each `*.py` of the package, the week's modules first, then in name order: read when it is a regular
    file within the limits, else why not. SubmissionError when there is no package folder to read."""
    package = open_package(submission)
    try:
        taken = 0
        for name, mode in _python_files(package):
            read = _module(package, name, mode, taken)
            taken += isinstance(read, Module)
            yield read if isinstance(read, Module) else LeftOut(submission.relative(name), *read)
    finally:
        os.close(package)


def _python_files(package: int) -> list[tuple[str, int]]:
    """(name, mode) of the package's `*.py`: the week's modules looked up by name (a crowd of other files
    cannot push them out of the bounded listing), then the others."""
    week = []
    for name in sorted(exercise_modules()):
        try:
            week.append((name, os.stat(name, dir_fd=package, follow_symlinks=False).st_mode))
        except FileNotFoundError:
            continue
        except OSError:
            week.append((name, 0))  # reading it will say it could not be read
    listed = _children(package, [MAX_ENTRIES])
    return [*week, *((name, mode) for name, mode in listed if name.endswith(".py") and name not in exercise_modules())]


@functools.cache
def exercise_modules() -> frozenset[str]:
    """The modules of the week's package (`padding.py`, ...): read before any other the student adds."""
    return frozenset(path.name for path in EXERCISES.glob("*.py"))


def _checked(name: str, mode: int, size: int, taken: int) -> tuple[Why, int] | None:
    """Why a `*.py` entry is not read, from what is known before opening it."""
    stem = name[:-3]
    if not stem.isidentifier():
        return Why.NOT_A_NAME, 0
    if stem in SHADOWING:
        return Why.SHADOWS, 0
    if not stat.S_ISREG(mode):
        return _kind(mode), 0
    if size > MAX_MODULE_BYTES:
        return Why.TOO_BIG, size
    return (Why.TOO_MANY, 0) if taken >= MAX_MODULES else None


def _module(package: int, name: str, mode: int, taken: int) -> Module | tuple[Why, int]:
    """One module read through a descriptor that cannot be a link, checked again once open."""
    try:
        listed = os.stat(name, dir_fd=package, follow_symlinks=False)
    except OSError:
        return Why.UNREADABLE, 0
    problem = _checked(name, listed.st_mode, listed.st_size, taken)
    if problem:
        return problem
    try:
        descriptor = os.open(name, _FILE, dir_fd=package)
    except OSError as error:
        return (Why.LINK if error.errno == errno.ELOOP else Why.UNREADABLE), 0
    with os.fdopen(descriptor, "rb") as handle:
        opened = os.fstat(descriptor)
        if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (listed.st_dev, listed.st_ino):
            return Why.SPECIAL, 0  # swapped since it was listed
        data = handle.read(MAX_MODULE_BYTES + 1)
    return (Why.TOO_BIG, len(data)) if len(data) > MAX_MODULE_BYTES else Module(name, data)


def copy_modules(submission: Submission, target: Path) -> list[LeftOut]:
    """Write the package's readable modules into `target` (made here); return the modules left out."""
    left_out = []
    for read in modules(submission):  # SubmissionError before anything is made
        target.mkdir(parents=True, exist_ok=True)
        if isinstance(read, Module):
            (target / read.name).write_bytes(read.data)
        else:
            left_out.append(read)
    target.mkdir(parents=True, exist_ok=True)
    return left_out


def remove_tree(path: Path) -> None:
    """Remove a folder and everything in it, however deep, following no link: best effort.

    shutil.rmtree recurses once per level, and 1,100 nested folders (a fork's, or what the student's
    code made in its scratch folder) end it in a RecursionError. This walks down and back up (`..`)
    with one descriptor open at a time, whatever the depth."""
    current = _open_for_removal(None, str(path))
    if current is None:
        return
    left, names = [iter(_emptied(current))], []  # per level: its folders still to remove; its own name
    try:
        while True:
            name = next(left[-1], None)
            if name is None and not names:
                break
            if name is None:  # this level is empty: up, and remove it
                parent = os.open("..", _FOLDER, dir_fd=current)
                os.close(current)
                current = parent
                left.pop()
                with contextlib.suppress(OSError):
                    os.rmdir(names.pop(), dir_fd=current)
                continue
            inner = _open_for_removal(current, name)
            if inner is not None:
                os.close(current)
                current = inner
                left.append(iter(_emptied(current)))
                names.append(name)
    except OSError:
        pass  # best effort: what is left stays in the temporary folder
    finally:
        os.close(current)
    with contextlib.suppress(OSError):
        os.rmdir(path)


def _open_for_removal(parent: int | None, name: str) -> int | None:
    """A folder's descriptor, the folder made ours to empty (a student may have taken its permissions away)."""
    for _ in range(2):
        try:
            descriptor = os.open(name, _FOLDER, dir_fd=parent)
        except PermissionError:
            with contextlib.suppress(OSError):
                os.chmod(name, 0o700, dir_fd=parent)
            continue
        except OSError:
            return None
        with contextlib.suppress(OSError):
            os.fchmod(descriptor, 0o700)
        return descriptor
    return None


def _emptied(folder: int) -> list[str]:
    """Unlink every entry of `folder` that is not a folder; return the names of its folders."""
    folders = []
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                folders.append(entry.name)
                continue
            with contextlib.suppress(OSError):
                os.unlink(entry.name, dir_fd=folder)
    return folders

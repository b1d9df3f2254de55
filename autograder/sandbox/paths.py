"""What the worker may see: the OS and the interpreter, never the instructor's files.

One source for every layer that draws the line: the namespaces bind these paths into
the worker's root, Landlock grants them, the probe checks the hidden ones stay shut.

Every grant is a real path: a symbolic link is never granted as such (Landlock opens a rule
through it, so a venv's `lib64 -> lib` would grant all of `lib`, site-packages' `solutions`
and `autograder` included). A link's target is reachable only where it is granted on its
own. `unsafe` checks the final set against the hidden paths before any layer applies it.
"""

import os
import site
import sys
import sysconfig
from pathlib import Path

import autograder
import solutions
from autograder.locations import MEMO_SUFFIX, memo_folder

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc")  # what a Python process needs of the OS
SYSTEM_FACTS = ("/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/sys/devices/system/cpu")  # read by torch and numpy
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
INSTRUCTOR_PACKAGES = ("autograder", "solutions")  # never readable, wherever a copy is installed
MAX_LINKS = 40  # links followed on one path, as the kernel's own limit
PRIVATE_VARIABLE = "AUTOGRADE_PRIVATE_PATHS"  # more paths the grader marks private (os.pathsep-separated)


def site_directories() -> list[str]:
    """Where torch, numpy and scikit-learn live, without processing any .pth file: the interpreter's site-packages,
    and in a venv made with --system-site-packages its base's too (where torch may be the base's alone)."""
    paths = sysconfig.get_paths()
    found = dict.fromkeys(p for p in (paths["purelib"], paths["platlib"], *site.getsitepackages()) if p)
    return [path for path in found if Path(path).is_dir()]


def libraries() -> list[str]:
    """The files the worker imports first of what it needs beyond the standard library (found, not imported)."""
    import importlib.util

    found = (importlib.util.find_spec(name) for name in ("numpy", "torch"))
    return [spec.origin for spec in found if spec is not None and spec.origin]


def interpreter_paths() -> list[Path]:
    """What the worker must still reach: the interpreter and its libraries (a venv and its base).

    A folder this user cannot reach (a private home on the way) is left out: the worker, never more
    privileged than the grader's user, could not reach it either, and the probe says what it misses.
    """
    paths = {Path(sys.base_prefix), Path(sys.prefix), Path(os.path.realpath(sys.executable)).parent}
    paths |= {Path(path) for path in sysconfig.get_paths().values()}
    return sorted({Path(os.path.realpath(path)) for path in paths if reachable(path)})


def reachable(path: Path) -> bool:
    """Whether `path` exists for this user (a folder it may not enter on the way counts as not)."""
    try:
        return path.exists()
    except OSError:
        return False


def repository() -> Path | None:
    """This checkout, when the grader runs from one (a repository beside its packages)."""
    root = Path(autograder.__file__).resolve().parent.parent
    return root if (root / "solutions").is_dir() and (root / "pyproject.toml").exists() else None


def hidden_paths() -> list[Path]:
    """The instructor's files: the repository, the packages wherever installed, what the grader marks private."""
    found = [Path(autograder.__file__).resolve().parent, Path(solutions.__file__).resolve().parent]
    found += [Path(site, name) for site in site_directories() for name in INSTRUCTOR_PACKAGES]
    found += [Path(path) for path in os.environ.get(PRIVATE_VARIABLE, "").split(os.pathsep) if path]
    found = [path.resolve() for path in found if path.exists()]
    # the reference's answers (checks/memo.py), hidden before they exist too: Landlock then grants the folders
    # around it entry by entry, so a memo made later, under a grant drawn earlier, is not opened by it
    found += [folder.resolve()] if (folder := memo_folder()) is not None else []
    root = repository()
    if root is not None:
        found = [root] + [path for path in found if not path.is_relative_to(root)]
    return list(dict.fromkeys(found))


def roots() -> list[Path]:
    """The OS and interpreter folders to grant or bind, each by its real path (links resolved)."""
    found = [Path(os.path.realpath(path)) for path in SYSTEM if os.path.exists(path)] + interpreter_paths()
    return outermost(found)


def links() -> dict[Path, str]:
    """The links the worker's root recreates as links (never bound): link -> its target.

    The OS folders that are links (/lib -> usr/lib on a merged /usr), and each link on the way from
    the interpreter's path to its real file (a venv's python -> the python it was made from) that no
    bound folder already holds. Each by its real location, so that none is written through a bind.
    """
    found = {Path(path): os.readlink(path) for path in SYSTEM if os.path.islink(path)}
    path = Path(sys.executable)
    for _ in range(MAX_LINKS):
        located = Path(os.path.realpath(path.parent)) / path.name
        if not located.is_symlink():
            break
        found[located] = os.readlink(located)
        path = Path(os.path.normpath(located.parent / found[located]))
    bound = roots()
    return {link: target for link, target in found.items() if not any(link.is_relative_to(root) for root in bound)}


def outermost(paths: list[Path]) -> list[Path]:
    """The paths not inside another one of them."""
    ordered = sorted(set(paths))
    return [path for path in ordered if not any(path != other and path.is_relative_to(other) for other in ordered)]


def around(root: Path, hidden: list[Path]) -> tuple[list[Path], list[Path]]:
    """`root` minus the hidden paths under it: (hierarchies to grant whole, folders to list only).

    A grant covers a whole hierarchy, so a folder holding a hidden path is granted entry by
    entry instead, and only listed itself (the names in it show, not the files).
    """
    if any(root == path for path in hidden) or root.is_symlink():
        return [], []  # a link is never granted: its target is granted on its own, or not at all
    inside = [path for path in hidden if path.is_relative_to(root)]
    if not inside or not root.is_dir():
        return [root], []
    granted, listed = [], [root]
    for entry in sorted(root.iterdir()):
        more, more_listed = around(entry, inside)
        granted += more
        listed += more_listed
    return granted, listed


def readable(hidden: list[Path]) -> tuple[list[Path], list[Path]]:
    """What the worker may read (whole hierarchies) and list (names only): the OS and the interpreter."""
    granted, listed = [], []
    for root in roots():
        more, more_listed = around(root, hidden)
        granted += more
        listed += more_listed
    return granted, listed


def unsafe(granted: list[Path], hidden: list[Path]) -> list[str]:
    """What is wrong with a set of grants: one reached through a link, or one that holds a hidden path."""
    problems = []
    for grant in granted:
        real = Path(os.path.realpath(grant))
        if real != Path(grant):
            problems.append(f"{grant} is a symbolic link (to {real})")
        problems += [f"{grant} would open {path}" for path in hidden if path.is_relative_to(real)]
    return problems


def evidence(hidden: list[Path]) -> list[str]:
    """One file inside each hidden path: what the probe tries to read."""
    files = []
    for path in hidden:
        if path.is_file():
            files.append(str(path))
            continue
        for root, folders, names in os.walk(path):
            folders[:] = sorted(name for name in folders if not name.startswith("."))
            found = [name for name in sorted(names) if name.endswith((".py", ".toml", MEMO_SUFFIX))]
            if found:
                files.append(os.path.join(root, found[0]))
                break
    return files

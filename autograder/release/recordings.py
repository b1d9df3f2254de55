"""The public tests' recordings kept by content: a public test module is recorded again only when something that
can change its recording has changed (what makes a second `autograde release` take seconds, not a minute).

`public_mistakes` records each public test module in a child process of its own, in a folder made for it: the
module, the public tests' conftest and other files, the reference solutions as `exercises/`, a pytest.ini. What
the child gives depends on that folder; on the grader's files it imports (the recorder itself, the variants, the
catalogue, the reference: every file of `autograder/` and `solutions/`); on the interpreter, every distribution
installed and what Python runs at start-up (sitecustomize, .pth files); on the CPU as torch dispatches on it; and
on the environment variables that reach Python, torch or the libraries under them (REACHING). An entry's key is
one digest of all of these, every file by its bytes: a change to any of them and the module is recorded again.

An entry is one file, `<module>-<key>.rec`: a line of JSON (its format, key and module, the sha256 of its
records, the tests the child ran, the seconds it took), then the records, compressed. It is written whole (a
temporary file renamed into place); one that cannot be read, whose header is not its own or whose records do not
match their digest is recorded again, never trusted. Where the folder cannot be written nothing is kept. Each
module keeps its KEEP entries used last.
"""

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import site
import sys
import tempfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from autograder.fingerprint import files_digest
from autograder.locations import PACKAGE, RECORDINGS_VARIABLE, SOLUTIONS

FORMAT = 1  # what an entry holds and how its key is made: raise it when either changes (all recorded again)
SUFFIX = ".rec"
KEEP = 4  # entries kept per public test module, the ones used last: a few checkouts or branches in turn
LEVEL = 1  # zlib's: fast, and the records' digits shrink several times over anyway
# The environment variables, by prefix, that reach what a child computes: Python's own, torch's, the thread
# pools' and BLAS's, numpy's and scikit-learn's, the dynamic loader's, the C library's and the locale, the grader's
REACHING = (
    *("PYTHON", "TORCH", "PYTORCH", "ATEN", "DNNL", "ONEDNN", "CUDA", "OMP_", "KMP_", "GOMP_", "MKL", "OPENBLAS"),
    *("BLIS", "GOTO", "VECLIB", "NUMEXPR", "NPY_", "NUMPY", "SKLEARN", "SCIPY", "LD_", "MALLOC", "GLIBC_", "LANG"),
    *("LC_", "AUTOGRADE"),
)
# where the entries are kept (not what they hold); the children's path, set by the recorder: their folder and the
# grader's, each in the key by its files
NOT_REACHING = {RECORDINGS_VARIABLE, "PYTHONPATH"}


@dataclass(frozen=True)
class Entry:
    """One public test module's recording: every test's records, the tests the child ran, the seconds it took."""

    records: dict[str, Any]
    tests: int
    seconds: float


def common(environment: Mapping[str, str]) -> str:
    """The digest of everything a module's recording depends on besides its own folder, read now; `environment`
    is the one the recording children are given."""
    parts = {
        "format": FORMAT,
        "grader": files_digest.__wrapped__((PACKAGE, SOLUTIONS)),  # read again: not the digest of this process' start
        "python": [sys.version, sys.executable, sys.implementation.cache_tag, platform.platform(), platform.libc_ver()],
        "installed": _installed(),
        "start-up": _start_up(),
        "cpu": [platform.machine(), _cpu_capability(), os.cpu_count(), cores()],
        "environment": {
            name: value
            for name, value in sorted(environment.items())
            if name.startswith(REACHING) and name not in NOT_REACHING
        },
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def cores() -> int:
    """The cores this process may run on (its affinity, where the system has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _installed() -> list[str]:
    """Every distribution installed, by name, version and where it is."""
    return sorted(
        f"{dist.metadata['Name']}=={dist.version}@{dist.locate_file('')}" for dist in importlib.metadata.distributions()
    )


def _start_up() -> dict[str, str]:
    """What Python runs before any test: sitecustomize, usercustomize and the .pth files, each by its digest."""
    found = [Path(path) for folder in _site_folders() for path in sorted(Path(folder).glob("*.pth"))]
    for name in ("sitecustomize", "usercustomize"):
        spec = importlib.util.find_spec(name)
        found += [Path(spec.origin)] if spec is not None and spec.origin and os.path.isfile(spec.origin) else []
    return {str(path): _digest(path) for path in found}


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as error:  # unreadable here: the child cannot read it either, and says so the same way
        return f"unreadable: {error.strerror}"


def _site_folders() -> list[str]:
    folders = [*site.getsitepackages(), site.getusersitepackages()]
    return [folder for folder in dict.fromkeys(folders) if os.path.isdir(folder)]


def _cpu_capability() -> str:
    """The instruction set torch's kernels are chosen for (AVX2, AVX512, ...), and how torch was built."""
    import torch  # the recorder's process has imported it already

    return f"{torch.backends.cpu.get_cpu_capability()}\n{torch.__config__.show()}"


def key(folder: Path, shared: str) -> str:
    """An entry's key: the digest of everything under the child's folder (each file's path and bytes) and of
    what every module shares (`common`)."""
    digest = hashlib.sha256(f"{FORMAT}\0{shared}\0".encode())
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            digest.update(f"{path.relative_to(folder).as_posix()}\0{len(data)}\0".encode() + data)
    return digest.hexdigest()


def _path(folder: Path, module: str, key: str) -> Path:
    return folder / f"{Path(module).stem}-{key}{SUFFIX}"


def load(folder: Path, module: str, key: str) -> Entry | None:
    """The module's entry under this key, or None: none kept, or one that cannot be read or is not whole."""
    path = _path(folder, module, key)
    try:
        head, _, body = path.read_bytes().partition(b"\n")
        header = json.loads(head)
        text = zlib.decompress(body)
        if _header(header) != (module, key) or hashlib.sha256(text).hexdigest() != header["sha256"]:
            return None
        entry = Entry(json.loads(text), int(header["tests"]), float(header["seconds"]))
        os.utime(path)  # used now: among the entries kept
    except (OSError, ValueError, TypeError, KeyError, AttributeError, zlib.error):
        return None
    return entry if isinstance(entry.records, dict) else None


def _header(header: Any) -> tuple[Any, Any]:
    """The module and key a header names, when it is of this format."""
    return (header["module"], header["key"]) if header.get("format") == FORMAT else (None, None)


def store(folder: Path, module: str, key: str, entry: Entry) -> None:
    """Keep the module's entry under this key (written whole, then renamed into place); nothing where the folder
    cannot be written. The module's older entries beyond KEEP go."""
    text = json.dumps(entry.records).encode()
    header = {"format": FORMAT, "module": module, "key": key, "sha256": hashlib.sha256(text).hexdigest()}
    header |= {"tests": entry.tests, "seconds": round(entry.seconds, 3)}
    data = json.dumps(header).encode() + b"\n" + zlib.compress(text, LEVEL)
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)  # the reference's calls: the instructor's alone
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{Path(module).stem}-", suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(handle, "wb") as written:
            written.write(data)
        os.replace(temporary, _path(folder, module, key))
    except OSError:
        Path(temporary).unlink(missing_ok=True)
        return
    _prune(folder, module)


def _entries(folder: Path, module: str) -> list[Path]:
    """The module's entries, the one used last first."""
    name = re.compile(re.escape(Path(module).stem) + rf"-[0-9a-f]{{64}}{re.escape(SUFFIX)}")
    try:
        found = [path for path in folder.iterdir() if name.fullmatch(path.name)]
        return sorted(found, key=lambda path: path.stat().st_mtime, reverse=True)
    except OSError:
        return []


def _prune(folder: Path, module: str) -> None:
    for path in _entries(folder, module)[KEEP:]:
        path.unlink(missing_ok=True)


class Run(NamedTuple):
    """A module's last recording kept: how long it took, how many tests its child ran."""

    seconds: float
    tests: int


def last_run(folder: Path, module: str) -> Run | None:
    """The module's recording kept last, if any (to start the longest first, and count its tests before its child
    has): read from its entry's header alone."""
    for path in _entries(folder, module)[:1]:
        try:
            with path.open("rb") as read:
                header = json.loads(read.readline())
            return Run(float(header["seconds"]), int(header["tests"]))
        except (OSError, ValueError, TypeError, KeyError):
            return None
    return None

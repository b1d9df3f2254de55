"""The reference's answers to fixed questions, kept on disk so that a grading need not import what computes them.

Two items ask the reference the same questions of every submission: the digit counts of two fixed batches and
the accuracy of a logistic regression on fixed rows (bag_of_counts and fit_baseline). The reference module imports
scikit-learn, which costs a grading more CPU than both questions together; its answers are kept in the
grader's memo folder (`locations.memo_folder`) and read back by the next grading on this machine.

An answer is used only where everything it depends on is as it was when it was kept: the grader's own files
(the reference among them, fingerprint.files_digest), the libraries' versions and the question's arguments,
all in its key. The memo is the grader's alone: a folder and files of its user that no one else may write,
read without following links, decoded as plain data (runtime/codec). Anything else (no folder, a file of
another user, a stale key, bytes that are not an answer) is answered by the reference, here, as before the
memo; where the folder cannot be written, nothing is kept. AUTOGRADE_NO_MEMO=1 in the grader's environment
never reads nor writes it (the benchmark's "today's way").
"""

import hashlib
import importlib
import importlib.metadata
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from autograder import fingerprint
from autograder.locations import MEMO_SUFFIX, memo_folder

# torch, numpy and the codec are imported where an answer is read or kept: `ready` runs before the worker
# starts, and the grader's own torch import must not hold that start back

NO_MEMO = "AUTOGRADE_NO_MEMO"
MAX_BYTES = 1 << 20  # the largest answer kept is a few hundred bytes: anything far larger is not one
LIBRARIES = ("scipy",)  # beside fingerprint.VERSIONED: the regression's solver is scipy's


def reference(target: str, *args: Any) -> Any:
    """The reference's `target` ("baseline.fit_baseline", a function of `solutions`) called with `args`:
    read from the memo where it holds a current answer, else computed here (and kept)."""
    folder = _folder()
    if folder is None:
        return _computed(target, args)
    path, key = folder / f"{target}.{_digest(args)[:16]}{MEMO_SUFFIX}", _key(target, args)
    found = _read(path, key)
    if found is not None:
        return found["value"]
    value = _computed(target, args)
    _keep(folder, path, {"key": key, "value": value})
    return value


def _folder() -> Path | None:
    """Where the memo is kept; None where it is off (AUTOGRADE_NO_MEMO=1) or there is no place for it."""
    return None if os.environ.get(NO_MEMO) == "1" else memo_folder()


def _computed(target: str, args: tuple[Any, ...]) -> Any:
    module, name = target.rsplit(".", 1)
    return getattr(importlib.import_module(f"solutions.{module}"), name)(*args)


def _key(target: str, args: tuple[Any, ...]) -> str:
    """Everything the answer depends on, in one digest: the grader's files, the versions, the question."""
    versions = fingerprint.versions() | {name: _version(name) for name in LIBRARIES}
    parts = [fingerprint.files_digest(), *(f"{name}={version}" for name, version in sorted(versions.items()))]
    return hashlib.sha256("\0".join([*parts, target, _digest(args)]).encode()).hexdigest()


def _version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return fingerprint.NOT_INSTALLED


def _digest(value: Any) -> str:
    """A digest of arguments made of tensors, arrays, numbers, strings and sequences of them."""
    digest = hashlib.sha256()
    _feed(digest, value)
    return digest.hexdigest()


def _feed(digest: Any, value: Any) -> None:
    import numpy as np
    import torch

    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray):
        array = np.ascontiguousarray(value)
        digest.update(f"array {array.dtype.str} {array.shape}\0".encode() + array.tobytes())
    elif isinstance(value, (list, tuple)):
        digest.update(f"{type(value).__name__} {len(value)}\0".encode())
        for item in value:
            _feed(digest, item)
    elif value is None or isinstance(value, (bool, int, float, str)):
        digest.update(f"{type(value).__name__} {value!r}\0".encode())
    else:
        raise TypeError(f"the memo's questions take tensors, arrays, numbers and strings, not {type(value).__name__}")


def _read(path: Path, key: str) -> dict[str, Any] | None:
    """The answer kept at `path` under `key`; None where there is none that may be trusted."""
    from autograder.runtime import codec

    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as file:
        if not (_owned(path.parent.stat()) and _owned(os.fstat(file.fileno()))):
            return None
        data = file.read(MAX_BYTES + 1)
    try:
        found = codec.loads(data) if len(data) <= MAX_BYTES else None
    except Exception:  # not an archive of plain data: recomputed, then replaced
        return None
    return found if isinstance(found, dict) and found.get("key") == key and "value" in found else None


def _owned(status: os.stat_result) -> bool:
    """This user's, and no one else's to write."""
    return status.st_uid == os.geteuid() and not status.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _keep(folder: Path, path: Path, entry: dict[str, Any]) -> None:
    """Write `entry` at `path`, whole or not at all; only in a folder `ready` made (the layers hide it)."""
    from autograder.runtime import codec

    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode) or not _owned(folder.stat()):
            return
        descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=".keeping-")
    except OSError:
        return  # the memo is only a matter of speed
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(codec.dumps(entry))
        os.replace(temporary, path)
    except OSError:
        Path(temporary).unlink(missing_ok=True)


def ready() -> Path | None:
    """Make the memo folder, this user's alone, before any worker starts: Landlock hides it whether or not it
    exists, but the namespaces' tmpfs only where it exists (sandbox/paths.hidden_paths), and answers are kept
    nowhere else. The folder, or None where there is none to keep them in."""
    folder = _folder()
    if folder is None:
        return None
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return None
    return folder

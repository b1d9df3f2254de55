"""The grading fingerprint: one digest of everything that decides a grade, and the versions it ran with.

A grade is made by the grader's own files (its checks, hidden suites, runtime, sandbox, grading code,
the reference solutions, the rubric's code and the lock it was installed from), the rubric file in use,
Python and the libraries the checks compute with. Their digest goes into results.json and into
grade-all's skip key: after any change to a check the next grade-all regrades every student, and a
roster graded by two graders says so. The files are read once per process; versions come from the
installed metadata (no heavy import).
"""

import functools
import hashlib
import importlib.metadata
import platform
import re
from dataclasses import dataclass
from pathlib import Path

from autograder.locations import PACKAGE, SOLUTIONS

VERSIONED = ("torch", "numpy", "scikit-learn", "pytest")  # the libraries a grade is computed with
SKIPPED_PARTS = {"__pycache__", ".pytest_cache", ".ruff_cache"}  # caches, not the grader
SHORT = 12  # hex digits of the digest shown in the gradebook and the reports
NOT_INSTALLED = "not installed"


@dataclass(frozen=True)
class Fingerprint:
    """What made a grading: the digest over the grader's files, the rubric and the versions; the versions."""

    digest: str  # sha256, hex
    versions: dict[str, str]  # "python", "torch", "numpy", "scikit-learn", "pytest" -> version

    @property
    def short(self) -> str:
        return self.digest[:SHORT]

    def as_dict(self) -> dict[str, object]:
        """results.json's extra_data.fingerprint."""
        return {"digest": self.digest, "versions": dict(self.versions)}


def grader_files(folders: tuple[Path, ...] = (PACKAGE, SOLUTIONS)) -> list[tuple[str, Path]]:
    """Every file of the grader's packages, as (its path relative to the packages' parent, the path), sorted."""
    found = []
    for folder in folders:
        for path in folder.rglob("*"):
            relative = path.relative_to(folder.parent)
            if path.is_file() and not SKIPPED_PARTS & set(relative.parts) and path.suffix not in (".pyc", ".pyo"):
                found.append((relative.as_posix(), path))
    return sorted(found)


@functools.cache  # the files are read once per process: a grading never sees them change under it
def files_digest(folders: tuple[Path, ...] = (PACKAGE, SOLUTIONS)) -> str:
    """One digest of the grader's files: each one's relative path and bytes, in order."""
    digest = hashlib.sha256()
    for relative, path in grader_files(folders):
        data = path.read_bytes()
        digest.update(f"{relative}\0{len(data)}\0".encode() + data)
    return digest.hexdigest()


def versions() -> dict[str, str]:
    """Python's version and the installed versions of the libraries in VERSIONED."""
    found = {"python": platform.python_version()}
    for name in VERSIONED:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = NOT_INSTALLED
    return found


@functools.cache
def fingerprint(rubric_text: str) -> Fingerprint:
    """The fingerprint of a grading by this grader, as installed here, by the rubric whose text is given."""
    found = versions()
    digest = hashlib.sha256(files_digest().encode() + b"\0")
    digest.update("".join(f"{name}={version}\n" for name, version in sorted(found.items())).encode())
    digest.update(rubric_text.encode("utf-8"))
    return Fingerprint(digest.hexdigest(), found)


def recorded(document: object) -> str:
    """The digest a results.json document records ('' when it records none)."""
    extra = document.get("extra_data") if isinstance(document, dict) else None
    stamp = extra.get("fingerprint") if isinstance(extra, dict) else None
    digest = stamp.get("digest") if isinstance(stamp, dict) else None
    return digest if isinstance(digest, str) and re.fullmatch("[0-9a-f]{64}", digest) else ""  # shown: hex only

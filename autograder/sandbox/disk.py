"""Layer: the worker's disk, bounded in every tier (the rubric's `disk_mb`).

Where the worker has a mount namespace, everything it may write (its scratch folder, /tmp,
/var/tmp, /dev/shm) is one size-capped tmpfs of its own: the kernel answers ENOSPC at the bound,
and the space vanishes with the worker (see namespaces). Elsewhere its scratch folder is on the
host's disk: RLIMIT_FSIZE bounds each file (EFBIG past it), and the supervisor measures the scratch
(bytes, entries, and the deleted files the worker still holds open) and kills the worker past the
bound. Landlock lets the worker write nowhere else; without Landlock and namespaces, a worker under
the grader's own user could write wherever that user may: there only each file is bounded, and the
record says so.

The grader's own files (the runtime and submission copies, its results) are never in that space: in
the namespaces the sandbox is bound read-only under the scratch's tmpfs; elsewhere they are read-only
by their modes or outside what Landlock grants.
"""

import json
import os
import subprocess
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

FULL = "disk full"  # the kind of death (and failure) of a worker that reached its bound
STATUS = 99  # the supervisor's exit status when it killed the worker for its disk
MAX_FILES = 10_000  # entries the worker may make (a tmpfs counts them as inodes)
SHARED = ("/tmp", "/var/tmp", "/dev/shm")  # where any user may write: watched for the worker's own uid


class How(StrEnum):
    """How the worker's disk is bounded in a tier."""

    TMPFS = "tmpfs"  # one size-capped tmpfs for everything it may write
    WATCHED = "watched"  # RLIMIT_FSIZE, and the supervisor measures what it may write
    FILE_SIZE = "file size"  # RLIMIT_FSIZE, the scratch watched, the rest of the grader's user's space not


@dataclass(frozen=True)
class Bound:
    """The worker's disk bound: how, how many bytes, how many entries (typed; `str` for people)."""

    how: How = How.FILE_SIZE
    bytes: int = 0
    files: int = MAX_FILES

    def __str__(self) -> str:
        size = f"{self.bytes >> 20} MB"
        if self.how == How.TMPFS:
            return f"disk: tmpfs {size}"
        if self.how == How.WATCHED:
            return f"disk: file size {size}, scratch watched"
        return f"disk: file size {size}, scratch watched, elsewhere per file only"

    def as_dict(self) -> dict[str, Any]:
        return {"how": str(self.how), "bytes": self.bytes, "files": self.files, "summary": str(self)}

    @property
    def whole(self) -> bool:
        """Whether everything the worker may write is bounded together (not merely file by file)."""
        return self.how != How.FILE_SIZE


def from_dict(data: Any) -> Bound | None:
    """A Bound read back from results.json (None where it has none)."""
    if not isinstance(data, dict) or data.get("how") not in set(How):
        return None
    return Bound(How(data["how"]), int(data.get("bytes") or 0), int(data.get("files") or MAX_FILES))


def bound(namespaces: bool, landlock: bool, separate_user: bool, size: int) -> Bound:
    """The bound a worker gets from its layers: a tmpfs in its namespaces, else its scratch watched."""
    if namespaces:
        return Bound(How.TMPFS, size)
    return Bound(How.WATCHED if landlock or separate_user else How.FILE_SIZE, size)


def watch(bound: Bound, scratch: Path, worker_uid: int | None) -> list[str]:
    """The supervisor's option that watches the scratch (and the shared folders, for a uid of its own)."""
    if bound.how == How.TMPFS:
        return []
    spec = {"paths": [str(scratch)], "bytes": bound.bytes, "files": bound.files, "status": STATUS}
    if worker_uid is not None:  # its files in the shared folders are its own uid's: those count too
        spec |= {"shared": list(SHARED), "uid": worker_uid}
    return ["--watch", json.dumps(spec)]


def in_worker(bound: Bound, scratch: Path) -> dict[str, Any]:
    """What the worker's runtime needs: its file size limit, and where its tmpfs is to see it full."""
    return {"bytes": bound.bytes, "tmpfs": str(scratch) if bound.how == How.TMPFS else ""}


def message(size: int) -> str:
    """The student's feedback when their code met the bound."""
    return f"your code wrote more than {size >> 20} MB to disk"


def fresh(scratch: Path) -> None:
    """Empty the scratch folder for a new worker (what the last one left would count against it).

    chmod first: a folder the student shut to its owner (the grader's own user, in the Landlock tier)
    is opened again; `rm` follows no link and has no recursion limit.
    """
    if scratch.exists():
        subprocess.run(["chmod", "-R", "u+rwX", "--", str(scratch)], capture_output=True, check=False)
        subprocess.run(["rm", "-rf", "--", str(scratch)], capture_output=True, check=False)
    scratch.mkdir(exist_ok=True)


def remove_owned(worker_uid: int, shared: tuple[str, ...] = SHARED) -> None:
    """Remove what the worker's own uid left in the shared folders (the grader is root wherever it has a uid)."""
    for folder in shared:
        try:
            found = list(os.scandir(folder))
        except OSError:
            continue
        for entry in found:
            try:
                owned = entry.stat(follow_symlinks=False).st_uid == worker_uid
            except OSError:
                continue
            if owned:
                subprocess.run(["rm", "-rf", "--", entry.path], capture_output=True, check=False)

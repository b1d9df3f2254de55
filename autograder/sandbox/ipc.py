"""After a worker with a uid of its own: the System V objects and kernel keys of that uid, found and removed.

System V shared memory, message queues and semaphores, and the kernel's keys, outlive the process that made
them: a segment holds memory no cgroup counts, and its number is all another process needs to read it. The
worker's seccomp filter refuses every call that makes or reaches one, and where it has namespaces its IPC
namespace is its own (gone with it); this is the grader's own look behind both, where the worker had a uid no
other process has, in the namespace the grader sees:

    /proc/sysvipc/shm, msg, sem   each object whose owner or creator is the uid: removed (IPC_RMID, as the uid)
    /proc/key-users               keys the uid holds beyond those it held when the worker started (the kernel
                                  keeps an empty keyring of a user that once had keys): its user keyrings
                                  emptied and dropped, by a process of that uid

Standard library only.
"""

import contextlib
import ctypes
import os
import platform
from dataclasses import dataclass
from pathlib import Path

SYSVIPC = Path("/proc/sysvipc")
KEY_USERS = Path("/proc/key-users")
IPC_RMID = 0
KINDS = {"shm": "shmid", "msg": "msqid", "sem": "semid"}  # a table of /proc/sysvipc and its id column
KEYCTL = {"x86_64": 250, "aarch64": 219}  # keyctl's number: what it does to @us and @u, as the uid itself
KEYCTL_CLEAR, KEYCTL_INVALIDATE, USER_KEYRING, USER_SESSION_KEYRING = 7, 21, -4, -5


@dataclass(frozen=True)
class Shared:
    """One System V object: its table (shm, msg or sem) and its id."""

    kind: str
    id: int


def objects(uid: int, root: Path = SYSVIPC) -> list[Shared]:
    """The System V objects owned or created by `uid`, in this process's IPC namespace."""
    found = []
    for kind, id_column in KINDS.items():
        try:
            lines = (root / kind).read_text().splitlines()
        except OSError:
            continue
        header = lines[0].split() if lines else []
        if not {id_column, "uid", "cuid"} <= set(header):
            continue
        for line in lines[1:]:
            row = dict(zip(header, line.split(), strict=False))
            with contextlib.suppress(KeyError, ValueError):
                if uid in (int(row["uid"]), int(row["cuid"])):
                    found.append(Shared(kind, int(row[id_column])))
    return found


def keys(uid: int, table: Path = KEY_USERS) -> int:
    """How many keys `uid` owns (0 where the kernel shows none, or has no keys at all)."""
    try:
        lines = table.read_text().splitlines()
    except OSError:
        return 0
    for line in lines:
        owner, _, counts = line.partition(":")
        with contextlib.suppress(ValueError, IndexError):
            if int(owner) == uid:
                return int(counts.split()[1].split("/")[0])
    return 0


def clear(uid: int, shared: list[Shared], keys_too: bool) -> None:
    """Remove `shared` (IPC_RMID: a segment goes once its last attachment does) and, with `keys_too`, empty and drop
    `uid`'s user keyrings, as that user: its own objects are its to remove in every tier (root may lack
    CAP_SYS_ADMIN, as in Docker), and keys are not root's to remove anywhere. A forked child of the grader does it:
    no program that the uid must be able to read, and only system calls between the fork and its exit."""
    if not shared and not keys_too:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    number = KEYCTL.get(platform.machine())
    child = os.fork()
    if child == 0:
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            _remove(libc, shared)
            for keyring in (USER_SESSION_KEYRING, USER_KEYRING) if keys_too and number else ():
                libc.syscall(number, KEYCTL_CLEAR, keyring)  # the session's first: it links the other
                libc.syscall(number, KEYCTL_INVALIDATE, keyring)
        finally:
            os._exit(0)
    os.waitpid(child, 0)


def _remove(libc: ctypes.CDLL, shared: list[Shared]) -> None:
    for item in shared:
        if item.kind == "shm":
            libc.shmctl(item.id, IPC_RMID, None)
        elif item.kind == "msg":
            libc.msgctl(item.id, IPC_RMID, None)
        else:
            libc.semctl(item.id, 0, IPC_RMID)

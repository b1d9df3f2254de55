"""After a worker has ended: the processes of its grading still alive, found by what marks them, killed, said.

The supervisor kills everything the worker started; this is the grader's own check that it did, by the
processes' existence (never by a signal the worker could have refused, nor by the worker's word):

    cgroup   the pids in the worker's cgroup (where it had one)
    uid      every process of the worker's uid (where it had one of its own: a lease, no other process has it)
    adopted  the grader is a child subreaper while it has workers, so a process its supervisor lost (the
             supervisor killed before it could end them) comes back to the grader, not to init; those that
             carry a seccomp filter more than the grader's own are the worker's (no process can drop a filter)

Whatever is found is killed, round after round until none is left, and counted by the mark that found it (but
for a process already killed and still ending when first found: it outlived nothing).
Then, where the worker had a uid of its own, what outlives processes (ipc.py):

    ipc      System V shared memory, message queues and semaphores of that uid: removed
    keys     the kernel keys of that uid: its keyrings cleared

The isolation record (`record.Isolation.left_behind`) says what was checked and what was found.
"""

import contextlib
import ctypes
import os
import signal
import time
from dataclasses import dataclass, field
from typing import Any

from autograder.sandbox import cgroup, ipc

CGROUP, UID, ADOPTED, IPC, KEYS = "cgroup", "uid", "adopted", "ipc", "keys"
PROCESSES = (CGROUP, UID, ADOPTED)  # the marks that find processes; the others find what outlives them
PR_SET_CHILD_SUBREAPER = 36
KILL_ROUNDS_SECONDS = 10.0  # a fork bomb racing the kills is ended long before this; then the count says so
PF_EXITING = 0x4  # the kernel's flag of a process in exit (include/linux/sched.h), in /proc/<pid>/stat's flags
SIGKILL_PENDING = 1 << (signal.SIGKILL - 1)  # its bit in /proc/<pid>/status's SigPnd and ShdPnd masks


@dataclass(frozen=True)
class Trace:
    """What marks one worker's processes: its uid of its own, its cgroup, and whether it has a seccomp filter."""

    uid: int | None = None
    group: cgroup.Group | None = None
    filtered: bool = False  # the worker installs a seccomp filter: adopted processes are found by it
    keys_before: int = 0  # the kernel keys its uid held when it started (what the kernel keeps of earlier ones)

    def checks(self) -> tuple[str, ...]:
        own = self.uid is not None
        marks = ((CGROUP, self.group is not None), (UID, own), (ADOPTED, self.filtered), (IPC, own), (KEYS, own))
        return tuple(name for name, marked in marks if marked)


@dataclass(frozen=True)
class Leftovers:
    """What the grader looked for after its workers (`checked`: the marks) and how many it found by each."""

    checked: tuple[str, ...] = ()
    found: dict[str, int] = field(default_factory=dict)

    @property
    def proven_none(self) -> bool:
        """Looked for by at least one mark, and none found."""
        return bool(self.checked) and not any(self.found.values())

    def merged(self, other: "Leftovers") -> "Leftovers":
        """Both looks together (a grading has a worker per start: each is looked after when it ends)."""
        checked = tuple(dict.fromkeys((*self.checked, *other.checked)))
        found = {mark: self.found.get(mark, 0) + other.found.get(mark, 0) for mark in checked}
        return Leftovers(checked, found)

    def as_dict(self) -> dict[str, Any]:
        return {"checked": list(self.checked), "found": dict(self.found)}

    def __str__(self) -> str:
        processes = sum(count for mark, count in self.found.items() if mark in PROCESSES)
        said = [f"{processes} process(es) outlived the worker, killed by the grader"] if processes else []
        if self.found.get(IPC):
            said.append(f"{self.found[IPC]} System V object(s) of the worker's, removed by the grader")
        if self.found.get(KEYS):
            said.append(f"{self.found[KEYS]} kernel key(s) of the worker's, cleared by the grader")
        return "; ".join(said)


def from_dict(data: Any) -> Leftovers | None:
    """A record read back from results.json (None: not recorded, or malformed)."""
    try:
        checked = tuple(str(mark) for mark in data["checked"])
        return Leftovers(checked, {str(mark): int(count) for mark, count in dict(data["found"]).items()})
    except (TypeError, KeyError, ValueError):
        return None


def adopt() -> None:
    """Make this process (the grader) a child subreaper: what a dead supervisor leaves comes back here."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def clear(trace: Trace) -> Leftovers:
    """Find the processes `trace` marks (once the worker's supervisor has ended), kill them until none is left,
    and say how many each mark found first."""
    first = found(trace)
    # those the supervisor killed may still be ending (freeing their memory is slow on a busy machine): they are
    # waited for below like the others, but they did not outlive it
    ending = {pid for pids in first.values() for pid in pids if dying(pid, status(pid))}
    left, adopted, deadline = first, set(), time.monotonic() + KILL_ROUNDS_SECONDS
    while any(left.values()) and time.monotonic() < deadline:
        adopted |= set(left.get(ADOPTED, []))
        for pid in {pid for pids in left.values() for pid in pids}:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        reap(adopted)
        time.sleep(0.005)
        left = found(trace)
    reap(adopted)
    counts = {mark: len(set(first.get(mark, [])) - ending) for mark in trace.checks()}
    if trace.uid is not None:  # once its processes are gone: none can make another
        counts.update(_outlasting(trace.uid, trace.keys_before))
    return Leftovers(trace.checks(), counts)


def _outlasting(uid: int, keys_before: int) -> dict[str, int]:
    """What of `uid` outlives its processes, removed: System V objects, kernel keys; how many of each."""
    shared, added = ipc.objects(uid), max(ipc.keys(uid) - keys_before, 0)
    ipc.clear(uid, shared, keys_too=added > 0)
    return {IPC: len(shared), KEYS: added}


def found(trace: Trace) -> dict[str, list[int]]:
    """The living processes (zombies aside) each mark of `trace` finds now."""
    marks: dict[str, list[int]] = {mark: [] for mark in trace.checks() if mark in PROCESSES}
    if trace.group is not None:
        marks[CGROUP] = [pid for pid in sorted(trace.group.pids()) if alive(status(pid))]
    own_filters = filters(status(os.getpid()))
    for pid in processes():
        fields = status(pid)
        if not alive(fields):
            continue
        if trace.uid is not None and trace.uid in uids(fields):
            marks[UID].append(pid)
        if trace.filtered and fields.get("PPid") == str(os.getpid()) and filters(fields) > own_filters:
            marks[ADOPTED].append(pid)
    return marks


def processes() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def status(pid: int) -> dict[str, str]:
    """/proc/<pid>/status as {field: value} (empty: the process is gone)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as handle:
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return {}
    return {name: value.strip() for name, _, value in (line.partition(":") for line in text.splitlines())}


def alive(fields: dict[str, str]) -> bool:
    return bool(fields) and not fields.get("State", "").startswith(("Z", "X"))


def dying(pid: int, fields: dict[str, str]) -> bool:
    """Killed and not yet ended: a SIGKILL pending, or in exit. No code of its own runs again."""
    pending = 0
    for mask in ("SigPnd", "ShdPnd"):
        with contextlib.suppress(ValueError):
            pending |= int(fields.get(mask, "0"), 16)
    return bool(pending & SIGKILL_PENDING) or bool(stat_flags(pid) & PF_EXITING)


def stat_flags(pid: int) -> int:
    """The kernel's flags of the process (/proc/<pid>/stat's ninth field; 0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            after_name = handle.read().decode("utf-8", "replace").rpartition(")")[2].split()
        return int(after_name[6])  # state, ppid, pgrp, session, tty_nr, tpgid, flags
    except (OSError, IndexError, ValueError):
        return 0


def uids(fields: dict[str, str]) -> set[int]:
    """Its real, effective, saved and file-system uids."""
    with contextlib.suppress(ValueError):
        return {int(number) for number in fields.get("Uid", "").split()}
    return set()


def filters(fields: dict[str, str]) -> int:
    """How many seccomp filters it carries (Linux 5.9+; before: 1 for any filter at all)."""
    if "Seccomp_filters" in fields:
        with contextlib.suppress(ValueError):
            return int(fields["Seccomp_filters"])
    return 1 if fields.get("Seccomp") == "2" else 0


def reap(adopted: set[int]) -> None:
    """Collect the adopted processes that have ended: only those, never a child another part of the grader
    waits for (a worker's supervisor is its Popen's to collect)."""
    for pid in list(adopted):
        with contextlib.suppress(ChildProcessError, OSError):
            if os.waitpid(pid, os.WNOHANG)[0]:
                adopted.discard(pid)

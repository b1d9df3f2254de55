"""Layer: a cgroup of the worker's own, below the grader's: a fair share of the CPU, bounded tasks and memory.

Where the grader is root and the hierarchy is writable, each worker gets a group of its own
under the grader's cgroup, with the same CPU weight as every other worker, a bound on its
tasks and one on its memory. A submission that forks spinners or starts 64 threads then
competes with its neighbour as one group against one group, whatever the scheduler's
autogroups do (a hosted runner's job runs in a single service cgroup, where they do not apply).

    cgroup v2  one hierarchy (hosted runners): cpu.weight, pids.max, memory.max
    cgroup v1  a hierarchy per controller (as on the machines that mount them): cpu.shares,
               pids.max, memory.limit_in_bytes

v2's rule that a cgroup with children for controllers holds no process of its own is met as
container tools meet it: the grader's cgroup's processes move into a leaf beside the workers'
(`LEAF`). The supervisor (root, outside every layer) writes the worker's pid into the group
before it execs, so no byte of the student's code runs outside it; the grader removes the
group once the supervisor has ended, killing first whatever is still in it.

Every path is read from /proc/self/cgroup and /proc/self/mountinfo, and both can be given
(a fake cgroupfs tree in tests).
"""

import contextlib
import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from autograder.sandbox.state import Layer

CONTROLLERS = ("cpu", "pids", "memory")
PREFIX = "autograde-worker-"  # a worker's group: PREFIX and a random token
LEAF = "autograde-grader"  # v2: where the grader's cgroup's own processes go, beside the workers' groups
V2 = "v2"  # the key of v2's single folder in `Hierarchy.parents`
WEIGHT = {1: ("cpu.shares", 1024), 2: ("cpu.weight", 100)}  # the default weight, the same for every worker
MEMORY = {1: "memory.limit_in_bytes", 2: "memory.max"}
KILL_ROUNDS_SECONDS = 10.0


@dataclass(frozen=True)
class Hierarchy:
    """Where the workers' groups go: the grader's cgroup, per v1 controller or v2's single folder."""

    version: int  # 1 or 2
    parents: dict[str, Path]  # v1: controller -> the grader's folder in its hierarchy; v2: {V2: the folder}

    def describe(self) -> str:
        return f"cgroup v{self.version} {','.join(CONTROLLERS)}"


@dataclass(frozen=True)
class Group:
    """One worker's cgroup: its folders (one per v1 controller, one in v2)."""

    version: int
    folders: dict[str, Path]  # as `Hierarchy.parents`: v1 controller (or V2) -> the group's folder

    def procs(self) -> list[str]:
        """The files the supervisor writes the worker's pid into."""
        return [str(folder / "cgroup.procs") for folder in self.folders.values()]

    def file(self, controller: str, name: str) -> Path:
        return self.folders.get(controller, self.folders.get(V2, Path("/nonexistent"))) / name

    def pids(self) -> set[int]:
        found: set[int] = set()
        for folder in self.folders.values():
            with contextlib.suppress(OSError, ValueError):
                found |= {int(line) for line in (folder / "cgroup.procs").read_text().split()}
        return found

    def remove(self) -> None:
        """Kill whatever is left in the group (cgroup.kill on v2 where the kernel has it), then remove it."""
        kill = self.file(V2, "cgroup.kill")
        if kill.exists():
            with contextlib.suppress(OSError):
                write(kill, 1)
        deadline = time.monotonic() + KILL_ROUNDS_SECONDS
        while (left := self.pids()) and time.monotonic() < deadline:
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)
        for folder in self.folders.values():
            remove_folder(folder, deadline)


def remove_folder(folder: Path, deadline: float) -> None:
    """rmdir a group's folder: busy while the last killed task is still exiting, so tried again until `deadline`
    (a group that outlives it is left for `leftovers` to find, never an error in the grading that made it)."""
    while folder.exists() and time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            folder.rmdir()
        time.sleep(0.01 if folder.exists() else 0)


def write(path: Path, value: object) -> None:
    """Every write to the hierarchy (a fake kernel in tests stands in here)."""
    path.write_text(str(value))


def memberships(proc: Path) -> dict[str, str]:
    """/proc/self/cgroup as {controller: path}; v2's line ("0::/path") under V2."""
    return memberships_of(proc.read_text())


def memberships_of(text: str) -> dict[str, str]:
    found = {}
    for line in filter(None, text.splitlines()):
        number, controllers, path = line.split(":", 2)
        if number == "0" and not controllers:
            found[V2] = path
        for controller in controllers.split(","):
            if controller:
                found[controller] = path
    return found


def mounts(mountinfo: Path) -> list[tuple[str, Path, str, set[str]]]:
    """The cgroup mounts in /proc/self/mountinfo: (the mount's root in its hierarchy, mount point, type, options)."""
    found = []
    for line in mountinfo.read_text().splitlines():
        mine, _, theirs = line.partition(" - ")
        fields, kind = mine.split(), theirs.split()
        if kind and kind[0] in ("cgroup", "cgroup2"):
            options = set(kind[2].split(",")) if len(kind) > 2 else set()
            found.append((fields[3], Path(fields[4].replace("\\040", " ")), kind[0], options))
    return found


def folder_of(path: str, root: str, point: Path) -> Path | None:
    """Where the cgroup `path` is under a mount of its hierarchy's `root` at `point` (None: outside the mount)."""
    inside = os.path.relpath(path, root)
    return None if inside.startswith("..") else Path(os.path.normpath(point / inside))


def find(proc: Path = Path("/proc/self/cgroup"), mountinfo: Path = Path("/proc/self/mountinfo")) -> Hierarchy | str:
    """The hierarchy the workers' groups go in (v2 where it has every controller, else v1), or why there is none."""
    member, mounted = memberships(proc), mounts(mountinfo)
    for root, point, kind, _ in mounted:
        folder = folder_of(member.get(V2, "/"), root, point) if kind == "cgroup2" and V2 in member else None
        if folder is not None and folder.name == LEAF:
            folder = folder.parent  # a grader moved there by an earlier one: the workers go beside it
        if folder is not None and set(CONTROLLERS) <= set(read(folder / "cgroup.controllers").split()):
            return Hierarchy(2, {V2: folder})
    parents = {}
    for controller in CONTROLLERS:
        for root, point, kind, options in mounted:
            if kind == "cgroup" and controller in options and controller in member:
                parents[controller] = folder_of(member[controller], root, point)
    missing = [controller for controller in CONTROLLERS if parents.get(controller) is None]
    if missing:
        return f"no cgroup hierarchy with the {', '.join(missing)} controller{'s' * (len(missing) > 1)} mounted"
    return Hierarchy(1, {controller: folder for controller, folder in parents.items() if folder is not None})


def read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def available(hierarchy: Hierarchy | str) -> Layer:
    """Whether this grader can give its workers groups: root, and a hierarchy it can write to."""
    if os.geteuid() != 0:
        return Layer.off("the grader is not root: the per-uid limits stand")
    if isinstance(hierarchy, str):
        return Layer.off(f"{hierarchy}: the per-uid limits stand")
    unwritable = [str(folder) for folder in hierarchy.parents.values() if not os.access(folder, os.W_OK)]
    if unwritable:
        return Layer.off(f"{unwritable[0]} is not writable (mounted read-only?): the per-uid limits stand")
    return Layer.on(hierarchy.describe())


def create(hierarchy: Hierarchy, processes: int, memory_bytes: int) -> Group:
    """A new group for one worker, with the same CPU weight as every other, `processes` tasks and `memory_bytes`."""
    if hierarchy.version == 2:
        delegate(hierarchy.parents[V2])
    name = PREFIX + secrets.token_hex(8)
    group = Group(hierarchy.version, {key: parent / name for key, parent in hierarchy.parents.items()})
    try:
        for folder in group.folders.values():
            folder.mkdir()
        weight, value = WEIGHT[hierarchy.version]
        settings = {("cpu", weight): value, ("pids", "pids.max"): processes}
        settings[("memory", MEMORY[hierarchy.version])] = memory_bytes
        for (controller, name), setting in settings.items():
            write(group.file(controller, name), setting)
    except OSError:
        group.remove()
        raise
    return group


def delegate(parent: Path) -> None:
    """v2: enable the controllers for `parent`'s children, its own processes first moved into LEAF if need be."""
    enabled = set(read(parent / "cgroup.subtree_control").split())
    if set(CONTROLLERS) <= enabled:
        return
    wanted = " ".join(f"+{controller}" for controller in CONTROLLERS)
    try:
        write(parent / "cgroup.subtree_control", wanted)
    except OSError:  # EBUSY: the cgroup has processes of its own (the grader's, at least)
        leaf = parent / LEAF
        leaf.mkdir(exist_ok=True)
        for pid in read(parent / "cgroup.procs").split():
            with contextlib.suppress(OSError):  # one that ended meanwhile
                write(leaf / "cgroup.procs", pid)
        write(parent / "cgroup.subtree_control", wanted)


def joined(text: str, group: Group) -> bool:
    """Whether a process whose /proc/<pid>/cgroup reads `text` is in `group`, in every one of its hierarchies."""
    try:
        member = memberships_of(text)
    except ValueError:
        return False
    return all(Path(member.get(key, "/")).name == folder.name for key, folder in group.folders.items())


def leftovers(hierarchy: Hierarchy) -> list[Path]:
    """The workers' groups still under the grader's cgroup (none once every worker has ended)."""
    return sorted(path for parent in hierarchy.parents.values() for path in parent.glob(PREFIX + "*"))

"""The layers chosen for a worker (a `Plan`), and the command line that stacks them.

    supervisor  ->  [cgroup]  ->  [uid]  ->  [namespaces + chroot]  ->  python -I -S (Landlock, seccomp, limits)

The supervisor runs as the grader and puts its child in the worker's cgroup before it execs;
the uid and namespace layers wrap the worker's command; Landlock and seccomp are applied by
the worker to itself (`confine`).
"""

import functools
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.locations import FORGET_GATE, RUNTIME, STANDINS
from autograder.sandbox import disk, landlock, namespaces, paths, uid

SUPERVISOR = Path(__file__).resolve().parent / "supervisor.py"
# copied into each sandbox as the package autograde_sandbox
IN_WORKER = ("confine.py", "landlock.py", "seccomp.py", "state.py")
IN_WORKER_PACKAGE = "autograde_sandbox"
RUNTIME_PACKAGE = "autograde_runtime"
# a root grader without a uid for the worker still takes every capability away from it
NO_CAPABILITIES = ["--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--"]


@dataclass(frozen=True)
class Plan:
    """The layers to put around a worker."""

    namespaces: str = ""  # namespaces.ROOT, namespaces.USER, or "" for none
    uid: bool = False  # a uid of its own (the grader is root)
    landlock: int = 0  # the Landlock ABI to apply, 0 for none
    seccomp: bool = False
    cgroup: bool = False  # a cgroup of its own (the grader is root, the hierarchy writable)


def command(
    plan: Plan,
    sandbox: Path,
    worker_uid: int | None,
    worker: list[str],
    passed: tuple[int, ...],
    cgroups: list[str] | None = None,
    limit: disk.Bound | None = None,
) -> list[str]:
    """The whole chain, from the supervisor down to `worker`; `cgroups`: the cgroup.procs files of its group;
    `limit` bounds its disk (the default's otherwise)."""
    limit = limit or bound(plan, namespaces.DEFAULT_DISK)
    watch = disk.watch(limit, sandbox / "scratch", worker_uid)
    supervisor = [sys.executable, "-I", "-S", str(SUPERVISOR), str(os.getpid()), ",".join(map(str, passed)), *watch]
    supervisor += [*(cgroups or []), "--"]
    become = uid.command(worker_uid) if worker_uid is not None else []
    space = (limit.bytes, limit.files)
    if plan.namespaces == namespaces.ROOT:
        chain = namespaces.command(namespaces.ROOT, sandbox, worker_uid, worker, space)
    elif plan.namespaces == namespaces.USER:
        chain = [*become, *namespaces.command(namespaces.USER, sandbox, None, worker, space)]
    elif become:
        chain = [*become, *worker]
    elif os.geteuid() == 0 and shutil.which("setpriv"):
        chain = [shutil.which("setpriv") or "setpriv", *NO_CAPABILITIES, *worker]
    else:
        chain = worker
    return [*supervisor, *chain]


def bound(plan: Plan, size: int) -> disk.Bound:
    """How this plan's worker is kept to `size` bytes of disk."""
    return disk.bound(bool(plan.namespaces), bool(plan.landlock), plan.uid, size)


def in_worker(plan: Plan, sandbox: Path) -> dict[str, Any]:
    """What `confine` applies inside the worker: Landlock's grants, and whether to filter system calls.

    The grants are real paths, checked against the hidden ones before the worker gets them: a
    set that would open an instructor's file is refused whole (Landlock then fails to start).
    """
    rules = None
    if plan.landlock:
        granted, listed = readable()
        sandbox = sandbox.resolve()
        read = [*granted, sandbox / "submission", sandbox / "runtime", *map(Path, paths.SYSTEM_FACTS)]
        devices = {path: landlock.READ_FILE for path in paths.DEVICES}
        devices["/dev/null"] |= landlock.WRITE_FILE
        rules = {
            "read": [str(path) for path in read],
            "listed": [str(path) for path in listed],
            "read_write": [str(sandbox / "scratch")],
            "devices": devices,
        }
        unsafe = paths.unsafe([*read, sandbox / "scratch", *map(Path, devices)], paths.hidden_paths())
        if unsafe:
            rules = {"refused": f"the grader refused its own grants: {'; '.join(unsafe[:3])}"}
    return {"landlock": rules, "seccomp": plan.seccomp}


@functools.cache
def readable() -> tuple[list[Path], list[Path]]:
    """The OS and interpreter paths the worker may read and list (the same for every worker)."""
    return paths.readable(paths.hidden_paths())


def prepare(plan: Plan, sandbox: Path, worker_uid: int | None) -> Path:
    """Copy the in-worker layers into the sandbox, make the namespaces' mount point, hand the sandbox over."""
    package = copy_in_worker(sandbox / "runtime")
    if plan.namespaces:
        namespaces.prepare(sandbox)
    if worker_uid is not None:
        uid.hand_over(sandbox, worker_uid)
    return package.parent


def copy_in_worker(runtime: Path) -> Path:
    """Copy the in-worker layers into `runtime` as their own package; the package's folder."""
    package = runtime / IN_WORKER_PACKAGE
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text('"""The worker\'s own layers, copied from autograder/sandbox."""\n')
    for name in IN_WORKER:
        shutil.copyfile(Path(__file__).resolve().parent / name, package / name)
    return package


def copy_runtime(sandbox: Path) -> Path:
    """Copy the runtime package into `sandbox`, but the answers to TODOs: the stand-ins (which come with the one call
    that uses them) and the forget gate (whose biases come with the training runs); the folder to put on the path."""
    target = sandbox / "runtime"
    shutil.rmtree(target, ignore_errors=True)
    left_out = shutil.ignore_patterns("__pycache__", STANDINS.name, FORGET_GATE.name)
    shutil.copytree(RUNTIME, target / RUNTIME_PACKAGE, ignore=left_out)
    return target

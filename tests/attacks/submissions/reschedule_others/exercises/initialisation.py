# Attack "reschedule_others" (tests/attacks): set_forget_bias lowers the priority of every other process
# of its uid, pins it to one CPU and makes it SCHED_IDLE; and renices its own process group (its supervisor).
# Appended to the base module: these definitions replace its own of the same names.
# A call that gets through costs the attack its answer (the test sees it in every tier).
import os

from torch import nn

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


_honest_set_forget_bias = set_forget_bias  # noqa: F821  (the base module's, defined above this text)


def _reschedule(pid: int) -> list[str]:
    """What got through on `pid`."""
    one_cpu = {min(os.sched_getaffinity(0))}
    calls = {
        "setpriority": lambda: os.setpriority(os.PRIO_PROCESS, pid, 19),
        "sched_setaffinity": lambda: os.sched_setaffinity(pid, one_cpu),
        "sched_setscheduler": lambda: os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0)),
    }
    reached = []
    for name, call in calls.items():
        try:
            call()
            reached.append(name)
        except OSError:
            pass
    return reached


def set_forget_bias(lstm: nn.LSTM, value: float = 1.0) -> nn.LSTM:
    """The reference's answer, after slowing down every other process in reach."""
    reached = [f"{name} on {pid}" for pid in _others() for name in _reschedule(pid)]
    try:
        os.setpriority(os.PRIO_PGRP, 0, 19)  # its process group: the supervisor's
        reached.append("setpriority on its process group")
    except OSError:
        pass
    if reached:
        _escape("; ".join(reached[:5]))
        return lstm
    return _honest_set_forget_bias(lstm, value)

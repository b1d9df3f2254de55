# Attack "prlimit_others" (tests/attacks): gather_final sets RLIMIT_CPU to 1 s on every other process of its uid.
# Appended to the base module: these definitions replace its own of the same names.
# Where the worker shares the grader's uid (no root, no user namespace), that kills the grader after its
# next second of CPU, and every other student's worker. A call that gets through costs the attack its
# answer (so the test sees it in every tier, Landlock's too, where it cannot write a trace).
import os
import resource

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


_honest_gather_final = gather_final  # noqa: F821  (the base module's, defined above this text)


def gather_final(output: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """The reference's answer, after RLIMIT_CPU (1 s) on every other process in reach."""
    reached = []
    for pid in _others():
        try:
            resource.prlimit(pid, resource.RLIMIT_CPU, (1, 1))
            reached.append(pid)
        except OSError:
            pass
    if reached:
        _escape(f"set RLIMIT_CPU to 1 s on {len(reached)} other process(es)")
        return torch.zeros(output.shape[0], output.shape[2])
    return _honest_gather_final(output, lengths)

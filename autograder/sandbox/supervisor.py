"""The floor under every layer: the process between the grader and the worker.

    python -I -S supervisor.py GRADER_PID FD[,FD...] -- COMMAND...

It starts COMMAND (the worker, inside whatever layers wrap it), passing it the
inherited descriptors FD (and closing its own copies, so that the worker's death
closes the pipes), then waits. It is a child subreaper: every process the worker
starts, even one that forks twice and leaves its session, stays its descendant. When
the worker ends, when the grader asks (SIGTERM) or when the grader dies (a
parent-death signal), it kills every descendant, waits for them, and exits with the
worker's status (a signal n as 128 + n, as a shell does).

It keeps the worker from leaving a process behind only where the worker cannot
signal it: another uid, another PID namespace, or a Landlock domain of ABI 6 and
later. Nor may the worker change its limits (seccomp refuses `prlimit64` on another
process), but it holds what it needs to clean up before the worker starts all the
same: its own children's list, open, read again in place. Killing its children one
round after another needs no new descriptor (the orphans of each round come back to
it), so even a `RLIMIT_NOFILE` of 0 cannot stop it. Standard library only; it runs as
the grader's user, outside every layer.
"""

import contextlib
import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36
STOP = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
KILL_ROUNDS_SECONDS = 10.0


def descendants(ancestor: int) -> list[int]:
    """Every living process under `ancestor`, from /proc (zombies included: they still need reaping)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                parent = int(stat.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(name))
    found, queue = [], [ancestor]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def reap() -> dict[int, int]:
    """Collect every child that has ended: {pid: wait status}."""
    ended = {}
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return ended
        if pid == 0:
            return ended
        ended[pid] = status


def own_children() -> int | None:
    """This process's list of children, opened now (None where the kernel has none: no CONFIG_PROC_CHILDREN)."""
    try:
        return os.open(f"/proc/{os.getpid()}/task/{os.getpid()}/children", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None


def children(listing: int) -> list[int]:
    """The children in `listing` (an open own_children()), read again from its start: no new descriptor."""
    text, offset = b"", 0
    try:
        while chunk := os.pread(listing, 1 << 16, offset):
            text, offset = text + chunk, offset + len(chunk)
    except OSError:
        return descendants(os.getpid())
    return [int(pid) for pid in text.split()]


def kill_all(listing: int | None = None) -> dict[int, int]:
    """SIGKILL every descendant, again and again, until none is left (orphans come back to this subreaper):
    the children in `listing` each round, or every descendant found in /proc where there is none."""
    ended: dict[int, int] = {}
    deadline = time.monotonic() + KILL_ROUNDS_SECONDS
    while True:
        found = children(listing) if listing is not None else descendants(os.getpid())
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        ended |= reap()
        if not found or time.monotonic() > deadline:
            return ended
        time.sleep(0.005)


def exit_code(status: int) -> int:
    return 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def main(argv: list[str]) -> int:
    grader, passed, command = int(argv[1]), [int(fd) for fd in argv[2].split(",") if fd], argv[4:]
    libc = ctypes.CDLL(None, use_errno=True)
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP | {signal.SIGCHLD})  # taken by sigwaitinfo below, never lost
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != grader:  # the grader died before the line above
        return 128 + signal.SIGKILL
    listing = own_children()  # before the worker exists
    worker = os.posix_spawn(command[0], command, os.environ, setsigmask=(), setsigdef=(signal.SIGPIPE, signal.SIGXFSZ))
    for fd in passed:
        os.close(fd)
    with open(os.devnull, "wb") as null:  # the output pipe stays the worker's alone
        os.dup2(null.fileno(), 1)
        os.dup2(null.fileno(), 2)
    status = None
    while status is None:
        if signal.sigwaitinfo(STOP | {signal.SIGCHLD}).si_signo in STOP:
            break
        status = reap().get(worker)
    status = kill_all(listing).get(worker, status)
    return 128 + signal.SIGKILL if status is None else exit_code(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv))

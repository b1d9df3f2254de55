"""The floor under every layer: the process between the grader and the worker.

    python -I -S supervisor.py GRADER_PID FD[,FD...] [CGROUP_PROCS...] -- COMMAND...

It starts COMMAND (the worker, inside whatever layers wrap it), passing it the
inherited descriptors FD (and closing its own copies, so that the worker's death
closes the pipes), in the cgroups whose cgroup.procs files are given (the child joins
them before it execs: nothing of the worker runs outside them), then waits. It is a child subreaper: every process the worker
starts, even one that forks twice and leaves its session, stays its descendant. When
the worker ends, when the grader asks (SIGTERM) or when the grader dies (a
parent-death signal), it kills every descendant, waits for them, and exits with the
worker's status (a signal n as 128 + n, as a shell does).

It keeps the worker from leaving a process behind only where the worker cannot
signal it: another uid, another PID namespace, or a Landlock domain of ABI 6 and
later. Standard library only; it runs as the grader's user, outside every layer.
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


def kill_all() -> dict[int, int]:
    """SIGKILL every descendant, again and again, until none is left (orphans come back to this subreaper)."""
    ended: dict[int, int] = {}
    deadline = time.monotonic() + KILL_ROUNDS_SECONDS
    while True:
        found = descendants(os.getpid())
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        ended |= reap()
        if not found or time.monotonic() > deadline:
            return ended
        time.sleep(0.005)


def remove_groups(cgroups: list[str]) -> None:
    """Kill whatever is left in the worker's cgroups, then remove them (the grader does too, should this end first)."""
    deadline = time.monotonic() + KILL_ROUNDS_SECONDS
    folders = [os.path.dirname(procs) for procs in cgroups]
    while folders and time.monotonic() < deadline:
        for procs in cgroups:
            with contextlib.suppress(OSError, ValueError), open(procs) as members:
                for pid in members.read().split():
                    with contextlib.suppress(OSError):
                        os.kill(int(pid), signal.SIGKILL)
        for folder in list(folders):
            with contextlib.suppress(OSError):
                os.rmdir(folder)  # busy while a task is still exiting: tried again
            if not os.path.exists(folder):
                folders.remove(folder)
        reap()
        time.sleep(0.005 if folders else 0)


def exit_code(status: int) -> int:
    return 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def spawn(command: list[str], cgroups: list[str]) -> int:
    """Start `command` in `cgroups` (its pid written into each cgroup.procs before it execs), signals as by default."""
    child = os.fork()
    if child:
        return child
    try:
        for procs in cgroups:
            with open(procs, "w") as group:
                group.write(str(os.getpid()))
    except OSError as error:  # never run the worker outside its group
        os.write(2, f"cgroup: could not enter the worker's cgroup: {error}\n".encode())
        os._exit(127)
    signal.pthread_sigmask(signal.SIG_SETMASK, ())
    for number in (signal.SIGPIPE, signal.SIGXFSZ):  # ignored by Python, and an ignored signal survives exec
        signal.signal(number, signal.SIG_DFL)
    try:
        os.execv(command[0], command)
    except OSError as error:
        os.write(2, f"supervisor: could not start the worker: {error}\n".encode())
    os._exit(127)


def main(argv: list[str]) -> int:
    grader, passed = int(argv[1]), [int(fd) for fd in argv[2].split(",") if fd]
    split = argv.index("--", 3)
    cgroups, command = argv[3:split], argv[split + 1 :]
    libc = ctypes.CDLL(None, use_errno=True)
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP | {signal.SIGCHLD})  # taken by sigwaitinfo below, never lost
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != grader:  # the grader died before the line above
        return 128 + signal.SIGKILL
    worker = spawn(command, cgroups)
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
    status = kill_all().get(worker, status)
    remove_groups(cgroups)
    return 128 + signal.SIGKILL if status is None else exit_code(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv))

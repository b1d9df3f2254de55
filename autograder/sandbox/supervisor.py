"""The floor under every layer: the process between the grader and the worker.

    python -I -S supervisor.py GRADER_PID FD[,FD...] [--watch SPEC] [CGROUP_PROCS...] -- COMMAND...

It starts COMMAND (the worker, inside whatever layers wrap it), passing it the
inherited descriptors FD (and closing its own copies, so that the worker's death
closes the pipes), in the cgroups whose cgroup.procs files are given (the child joins
them before it execs: nothing of the worker runs outside them), then waits. It is a child
subreaper: every process the worker starts, even one that forks twice and leaves its session,
stays its descendant. When the worker ends, when the grader asks (SIGTERM) or when the grader
dies (a parent-death signal), it kills every descendant, waits for them, removes the worker's
cgroups, and exits with the worker's status (a signal n as 128 + n, as a shell does).

With `--watch` (a JSON SPEC, see sandbox/disk.py) it measures, every WATCH_SECONDS, what the
worker wrote: the folders in `paths`, its own uid's entries in the `shared` ones, and the deleted
files its processes hold open; past `bytes` or `files` it kills them all and exits with `status`.

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
import json
import os
import signal
import stat
import sys
import time

PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36
STOP = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
KILL_ROUNDS_SECONDS = 10.0
WATCH_SECONDS = 0.1  # how often a watched worker's disk is measured
OPEN_FILES_EVERY = 5  # rounds: the deleted files held open are found by a scan of /proc, the costly part


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


class Usage:
    """What the worker wrote so far: bytes on disk and entries, each file once, stopping past the bound."""

    def __init__(self, spec: dict) -> None:
        self.spec, self.bytes, self.files, self.seen = spec, 0, 0, set()

    def over(self) -> bool:
        return self.bytes > self.spec["bytes"] or self.files > self.spec["files"]

    def add(self, info: os.stat_result) -> bool:
        """Count a file or folder once (a folder reached twice, through a link swapped in, is walked once)."""
        if (info.st_dev, info.st_ino) in self.seen:
            return False
        self.seen.add((info.st_dev, info.st_ino))
        self.bytes += info.st_blocks * 512
        self.files += 1
        return True


def measure(spec: dict, open_files: bool = True) -> Usage:
    """The worker's usage now: its folders whole, its uid's entries in the shared ones, and (`open_files`)
    the deleted files its processes hold open."""
    usage = Usage(spec)
    for path in spec.get("paths", []):
        walk(path, usage, None)
    for path in spec.get("shared", []):
        walk(path, usage, spec.get("uid"), top=True)
    for pid in descendants(os.getpid()) if open_files else []:
        held_open(pid, usage)
    return usage


def walk(root: str, usage: Usage, owner: int | None, top: bool = False) -> None:
    """Add the entries under `root` (only those of `owner` at its top, when given), never following a link."""
    folders = [root]
    while folders and not usage.over():
        folder = folders.pop()
        for entry in entries(folder):
            with contextlib.suppress(OSError):
                info = entry.stat(follow_symlinks=False)
                if top and folder == root and owner is not None and info.st_uid != owner:
                    continue
                if usage.add(info) and stat.S_ISDIR(info.st_mode):
                    folders.append(entry.path)


def entries(folder: str) -> list[os.DirEntry]:
    """A folder's entries; one the worker shut to its owner (this user) is opened again first."""
    for _ in range(2):
        try:
            with os.scandir(folder) as found:
                return list(found)
        except PermissionError:
            reopen(folder)
        except OSError:
            return []
    return []


def reopen(folder: str) -> None:
    """Give the owner (this user) its rights on `folder` back, never through a link (chmod by an O_PATH handle)."""
    with contextlib.suppress(OSError):
        handle = os.open(folder, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY)
        try:
            os.chmod(f"/proc/self/fd/{handle}", 0o700)
        finally:
            os.close(handle)


def held_open(pid: int, usage: Usage) -> None:
    """Add the files `pid` holds open that no folder shows any more (deleted, still taking space)."""
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{pid}/fd/{fd}").endswith(" (deleted)"):
                    info = os.stat(f"/proc/{pid}/fd/{fd}")
                    if stat.S_ISREG(info.st_mode):
                        usage.add(info)


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
    options, command = argv[3:split], argv[split + 1 :]
    watched = json.loads(options[1]) if options[:1] == ["--watch"] else None
    cgroups = options[2:] if watched is not None else options
    libc = ctypes.CDLL(None, use_errno=True)
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP | {signal.SIGCHLD})  # taken by sigtimedwait below, never lost
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != grader:  # the grader died before the line above
        return 128 + signal.SIGKILL
    listing = own_children()  # before the worker exists
    worker = spawn(command, cgroups)
    for fd in passed:
        os.close(fd)
    with open(os.devnull, "wb") as null:  # the output pipe stays the worker's alone
        os.dup2(null.fileno(), 1)
        os.dup2(null.fileno(), 2)
    status, full, rounds = None, False, 0
    while status is None and not full:
        woken = signal.sigtimedwait(STOP | {signal.SIGCHLD}, WATCH_SECONDS if watched else 3600)
        if woken is not None and woken.si_signo in STOP:
            break
        status = reap().get(worker)
        rounds += 1
        full = watched is not None and measure(watched, rounds % OPEN_FILES_EVERY == 0).over()
    status = kill_all(listing).get(worker, status)
    remove_groups(cgroups)
    if full:
        return watched["status"]
    return 128 + signal.SIGKILL if status is None else exit_code(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""The warm parent: inside the worker's layers, it has imported torch once and forks each worker from there.

Started by the grader as `python -I -S -c BOOT_WARM CONFIG` (see autograder.sandbox.worker) at the
bottom of the same chain as a cold worker (supervisor, cgroup, uid, namespaces and chroot). It imports
torch and the preload, warms them up, then waits on its control socket. It is grader code only: the
student's folder is not on its path, it never imports or calls the student's code, and the stand-ins
never reach it (they come with the requests, to the child). It is not dumpable, so that no process of
its uid can read or write its memory, and it is a child subreaper (in a PID namespace, its init).

Each request on the control socket, `fork` or `end`, first makes the ground clean: every descendant it
has is killed and reaped (orphans come back to it), and the worker's writable folders are emptied
(their files are the worker uid's, so it may). A `fork` then comes with the three descriptors of a
new worker (requests, responses, output) and answers with what it found and cleared. The child closes
the control socket, applies the in-process layers to itself (Landlock, seccomp; then serve's limits)
before it reads a single byte of a request, and serves exactly as a cold worker does. Standard library
only, but for serve, which the child runs.
"""

import contextlib
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER = 4, 36
MESSAGE_BYTES = 1 << 12  # a control message: a word and a few numbers
KILL_ROUNDS_SECONDS = 10.0
END_GRACE_SECONDS = 1.0  # a worker whose requests were closed ends by itself: it is given this long
WORKER_FDS = 3  # a worker's requests, responses and output


def parent(config: dict[str, Any], confine: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Answer the grader's control requests until it closes the socket; then end every child."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    control = socket.socket(fileno=config["control_fd"])
    kept = made(config["clear"], mount_points())  # before any worker has run
    current = 0  # the worker last forked
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(control, MESSAGE_BYTES, WORKER_FDS)
        except OSError:
            data, fds = b"", []
        if not data:
            kill_descendants()
            return
        answer, current = clean(config["clear"], kept, current), 0
        if data == b"fork" and len(fds) == WORKER_FDS:
            answer["pid"] = current = fork(config, confine, control, fds)
        for fd in fds:
            os.close(fd)
        control.sendall(json.dumps(answer).encode())


def clean(folders: list[str], kept: dict[str, str], current: int) -> dict[str, Any]:
    """Kill every descendant, then empty the writable `folders`: how the `current` worker ended (None where
    it had to be killed), how many processes were killed, and the folders now empty."""
    status = ended(current) if current else None
    killed = kill_descendants()
    cleared = [folder for folder in folders if empty(folder, kept)]
    return {"status": status, "killed": killed, "cleared": cleared}


def ended(pid: int) -> int | None:
    """`pid`'s exit, as the supervisor reports one (a signal n as 128 + n), if it ends within a moment."""
    deadline = time.monotonic() + END_GRACE_SECONDS
    while time.monotonic() < deadline:
        try:
            found, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return None
        if found:
            return 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        time.sleep(0.005)
    return None


def fork(config: dict[str, Any], confine: Callable, control: socket.socket, fds: list[int]) -> int:
    """A child that serves on `fds` (requests, responses, output), confined first; its pid."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()
    child = os.fork()
    if child:
        return child
    status = 1
    try:
        control.close()
        serve_child(config, confine, fds)
        status = 0
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(status)  # never back into the parent's loop


def serve_child(config: dict[str, Any], confine: Callable, fds: list[int]) -> None:
    """The worker: its layers on itself, the student's folder on its path, then serve as a cold worker does."""
    requests, responses, output = fds
    for target in (1, 2):
        os.dup2(output, target)
    os.close(output)
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # its /proc as a cold worker's
    confined = confine(config["confine"])  # this process's own Landlock domain and seccomp filter
    sys.path[:0] = [config["submission"]]
    from . import serve

    serve.main({**config, "request_fd": requests, "response_fd": responses}, confined)


def descendants() -> list[int]:
    """Every living process under this one, from /proc (zombies included: they still need reaping)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError), open(f"/proc/{name}/stat", "rb") as stat:
                children.setdefault(int(stat.read().rsplit(b")", 1)[1].split()[1]), []).append(int(name))
    found, queue = [], [os.getpid()]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def kill_descendants() -> int:
    """SIGKILL every descendant, round after round until none is left; how many there were."""
    killed: set[int] = set()
    deadline = time.monotonic() + KILL_ROUNDS_SECONDS
    while True:
        found = descendants()
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        killed.update(found)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        if not found or time.monotonic() > deadline:
            return len(killed)
        time.sleep(0.005)


def made(folders: list[str], mounts: frozenset[str]) -> dict[str, str]:
    """What the chain made in the writable `folders` before any worker ran (the folders and links on the way
    to what it bound, the mount points): path -> `kind`, kept as it is and restored where a worker changed it."""
    found, queue = {}, list(folders)
    while queue:
        folder = queue.pop()
        with contextlib.suppress(OSError):
            for name in os.listdir(folder):
                path = os.path.join(folder, name)
                found[path] = "mount" if path in mounts else kind(path)
                if found[path] == "folder":
                    queue.append(path)
    return {path: what for path, what in found.items() if what != "file"}


def kind(path: str) -> str:
    """What `path` is, never following a link: a link and its target, a folder, or a file."""
    if os.path.islink(path):
        return f"link to {os.readlink(path)}"
    return "folder" if os.path.isdir(path) else "file"


def empty(folder: str, kept: dict[str, str]) -> bool:
    """Remove everything in `folder` but what the chain made (`kept`: restored where it was changed or removed);
    whether `folder` holds exactly that now. No link is followed."""
    with contextlib.suppress(OSError):
        info = os.stat(folder, follow_symlinks=False)
        if info.st_uid == os.getuid():  # a folder of its own the worker shut: opened again
            os.chmod(folder, info.st_mode | 0o700, follow_symlinks=False)
        for name in os.listdir(folder):
            path = os.path.join(folder, name)
            if kept.get(path) == "mount" or kept.get(path) == kind(path):
                continue
            if os.path.isdir(path) and not os.path.islink(path):
                subprocess.run(["chmod", "-R", "u+rwX", "--", path], capture_output=True, check=False)
                subprocess.run(["rm", "-rf", "--", path], capture_output=True, check=False)
            else:
                os.unlink(path)
        for path, what in kept.items():
            if os.path.dirname(path) == folder and not os.path.lexists(path):
                restore(path, what)
        inside = [path for path, what in kept.items() if os.path.dirname(path) == folder and what == "folder"]
        return all(empty(path, kept) for path in inside) and sorted(os.listdir(folder)) == sorted(
            os.path.basename(path) for path in kept if os.path.dirname(path) == folder
        )
    return False


def restore(path: str, what: str) -> None:
    """Make again a folder or a link of the chain's that a worker removed."""
    if what == "folder":
        os.mkdir(path, 0o755)
    elif what.startswith("link to "):
        os.symlink(what.removeprefix("link to "), path)


def mount_points() -> frozenset[str]:
    """Where something is mounted, as this process sees it (/proc/self/mountinfo's fifth field, unescaped)."""
    with open("/proc/self/mountinfo", "rb") as listing:
        fields = [line.split()[4] for line in listing if len(line.split()) > 4]
    return frozenset(field.decode("unicode_escape") for field in fields)

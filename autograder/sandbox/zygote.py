"""The grader's side of the run's warm process (runtime/zygote.py): start it, and hand it what a grading's chain built.

Where the worker gets namespaces, a grading's chain (supervisor, cgroup, uid, namespaces and chroot, see layers)
ends in `HOLD`, a small process that sends back its root and its namespaces and then stays as its PID namespace's
init; the zygote forks that grading's warm parent into them, instead of a python that imports torch at the bottom of
every chain. `grade` starts a zygote of its own beside its grader, `grade-all` one for the whole run (`use`), which its
gradings share. Where the zygote is not there, or its child does not answer, the grading builds the whole chain as
before (sandbox/worker.py).
"""

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from autograder.runtime.zygote import HELD, NAMESPACES, PR_SET_DUMPABLE
from autograder.sandbox import layers, paths

BOOT = (
    "import json, sys\n"
    "config = json.loads(sys.argv[1])\n"
    "sys.path[:0] = [config['runtime']]\n"
    "sys.path += config['site']\n"
    "from autograde_runtime import zygote\n"
    "zygote.main(config)\n"
)
# the chain's last process, where a zygote serves: it sends its root and namespaces, then reaps its PID namespace
HOLD = (
    "import ctypes, json, os, signal, socket, sys\n"
    f"ctypes.CDLL(None).prctl({PR_SET_DUMPABLE}, 0, 0, 0, 0)\n"  # no process of its uid may trace it
    "config = json.loads(sys.argv[1])\n"
    "held = [os.open('/', os.O_RDONLY | os.O_DIRECTORY)]\n"
    f"held += [os.open('/proc/self/ns/' + name, os.O_RDONLY) for name in {tuple(NAMESPACES)!r}]\n"
    "with socket.socket(fileno=config['hold_fd']) as grader:\n"
    "    socket.send_fds(grader, [b'held'], held)\n"
    "for fd in held:\n"
    "    os.close(fd)\n"
    "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})\n"
    "while True:\n"
    "    try:\n"
    "        while os.waitpid(-1, os.WNOHANG)[0]:\n"
    "            pass\n"
    "    except ChildProcessError:\n"
    "        pass\n"
    "    signal.sigwait({signal.SIGCHLD})\n"
)
SOCKET_NAME = "warm.socket"
CONNECT_SECONDS = 10.0
_shared: str | None = None  # the run's zygote, in a grading process of grade-all


def use(address: str | None) -> None:
    """Let every worker of this process ask the run's zygote at `address` (grade-all's gradings)."""
    global _shared
    _shared = address


def shared() -> str | None:
    return _shared


class Zygote:
    """A zygote process of this grader's, with the preload imported: for one grading, or a whole run."""

    def __init__(self, preload: tuple[str, ...]) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="autograde-warm-"))  # 0700: only the grader's user connects
        self.address = str(self.folder / SOCKET_NAME)
        try:
            self._start(preload)
        except BaseException:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise

    def _start(self, preload: tuple[str, ...]) -> None:
        runtime = layers.copy_runtime(self.folder)
        layers.copy_in_worker(runtime)
        with socket.socket(socket.AF_UNIX) as listener:
            at(listener.bind, self.address)
            listener.listen(64)
            config = {
                "runtime": str(runtime),
                "site": paths.site_directories(),
                "preload": list(preload),
                "listen_fd": listener.fileno(),
                "owner": os.getpid(),
            }
            with open(self.folder / "zygote.log", "wb") as log:
                self.process = subprocess.Popen(
                    [sys.executable, "-I", "-S", "-c", BOOT, json.dumps(config)],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    pass_fds=(listener.fileno(),),
                    cwd=self.folder,
                    env=environment(str(self.folder)),
                    start_new_session=True,
                )

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> "Zygote":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def environment(home: str) -> dict[str, str]:
    """A worker's environment (the warm parent's own is set from its grading's)."""
    return {"PATH": "/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1"}


def at(call: Callable[[str], None], address: str) -> None:
    """`call` (a socket's bind or connect) on `address` by a short path: a socket's path may be at most 107 bytes,
    and a temporary folder's may be longer (the descriptor's own link in /proc names the folder instead)."""
    folder = os.open(os.path.dirname(address), os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        call(f"/proc/self/fd/{folder}/{os.path.basename(address)}")
    finally:
        os.close(folder)


def held(holding: socket.socket) -> list[int]:
    """The root and namespaces the chain's last process sent (none where it sent fewer, or nothing in time)."""
    try:
        _, fds, _, _ = socket.recv_fds(holding, 16, len(HELD))
    except OSError:
        return []
    if len(fds) == len(HELD):  # its root, then the namespaces, as the zygote takes them
        return fds
    for fd in fds:
        os.close(fd)
    return []


def ask(address: str, request: dict[str, Any], fds: list[int]) -> bool:
    """Hand the zygote at `address` one grading's request and descriptors; whether it took them."""
    try:
        with socket.socket(socket.AF_UNIX) as connection:
            connection.settimeout(CONNECT_SECONDS)
            at(connection.connect, address)
            socket.send_fds(connection, [b"w"], fds)
            connection.sendall(json.dumps(request).encode())
            connection.shutdown(socket.SHUT_WR)
    except OSError:
        return False
    return True

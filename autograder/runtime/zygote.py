"""The run's warm process: torch imported once, each grading's warm parent forked from it into its layers.

Started by the grader (autograder/sandbox/zygote.py) as `python -I -S -c BOOT CONFIG`, as the grader's user and
outside every layer: grader code only, it never reads a byte of a student's. It imports torch and the preload, warms
them up, then accepts connections on the listening socket it was given, and forks at once for each one, before it
reads anything from it: nothing of one grading's request is ever in its memory, and each warm parent is a copy of it.

The child (`enter`) reads its request: the grading's warm-parent config (as runtime/warm.py takes it) and the
descriptors of what that grading's chain built and its last process holds (its root; its user, mount, network and
PID namespaces), its control socket and its output. It joins the grading's cgroups, enters its namespaces and its
root, forks into the PID namespace, and there drops to the worker's user with no capability left, as the chain's
`setpriv` would, and checks it did; then it serves as the grading's warm parent, whose workers confine themselves as
every worker does. Where any step fails it exits: the grader, answered by no one, builds that grading a chain of its
own (sandbox/worker.py). Standard library only, but for serve and warm.
"""

import contextlib
import ctypes
import importlib
import json
import os
import signal
import socket
import sys
import traceback
from typing import Any

from .warm import PR_SET_CHILD_SUBREAPER, PR_SET_DUMPABLE

PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 24, 38
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
CAPABILITY_VERSION_3 = 0x20080522
NAMESPACES = {"user": 0x10000000, "mnt": 0x00020000, "ipc": 0x08000000, "net": 0x40000000, "pid": 0x20000000}
HELD = ("root", *NAMESPACES)  # the descriptors the chain's last process sends, in this order
REQUEST_BYTES = 1 << 22  # a warm parent's config: Landlock's grants are the longest part
LIBC = ctypes.CDLL(None, use_errno=True)


def main(config: dict[str, Any]) -> None:
    """Warm up, then fork a child for each connection until the grader that started it is gone."""
    LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != config["owner"]:
        return  # the grader ended before the line above
    LIBC.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    LIBC.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # each warm parent comes back to it, to be reaped at once
    signal.signal(signal.SIGCHLD, reap)  # a namespace's init cannot end while one of its processes is unreaped
    from . import serve

    serve.warm_up(config["preload"])
    listener = socket.socket(fileno=config["listen_fd"])
    while True:
        connection, _ = listener.accept()
        if os.fork() == 0:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            listener.close()
            child(connection)
        connection.close()


def reap(*_: object) -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


def child(connection: socket.socket) -> None:
    """One grading's warm parent, from its request on `connection`; never back into the zygote's loop."""
    status = 1
    try:
        config = enter(connection)
        serve_as_parent(config)
        status = 0
    except BaseException:
        with contextlib.suppress(BaseException):
            print("autograde-warm: the grading's warm parent did not start:", file=sys.stderr)
            traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(status)


def enter(connection: socket.socket) -> dict[str, Any]:
    """Read the request, then enter the grading's cgroups, namespaces and root; return its warm parent's config
    (in the PID namespace's process, with the worker's user and no capabilities)."""
    _, fds, _, _ = socket.recv_fds(connection, 1, 2 + len(HELD))
    request = json.loads(read_all(connection))
    connection.close()
    control, output, *held = fds
    for target in (1, 2):
        os.dup2(output, target)
    os.close(output)
    os.setsid()
    descriptors = dict(zip(HELD, held, strict=True))
    for procs in request["cgroups"]:  # before anything else: all that follows is counted in them
        with open(procs, "w") as group:
            group.write(str(os.getpid()))
    join(descriptors, request["kind"] == "user namespace")
    if os.fork():
        os._exit(0)  # the warm parent is a child of the PID namespace, reaped by the zygote (a subreaper)
    drop(request["uid"])
    os.umask(0o022)  # the chain's shell sets it: the same for what a worker writes
    os.environ.clear()
    os.environ.update(request["environment"])
    with contextlib.suppress(OSError):
        os.chdir("/")
        os.chdir(request["cwd"])
    return {**request["config"], "control_fd": control}


def read_all(connection: socket.socket) -> bytes:
    data = bytearray()
    while chunk := connection.recv(1 << 16):
        data += chunk
        if len(data) > REQUEST_BYTES:
            raise ValueError("the request is larger than a warm parent's config can be")
    return bytes(data)


def join(held: dict[str, int], user: bool) -> None:
    """Enter the namespaces and the root the chain built, each checked to be a new one, the user namespace first."""
    wanted = [name for name in NAMESPACES if user or name != "user"]
    for name in wanted:  # all before the first is entered: this process's /proc is then the chain's
        if os.fstat(held[name]).st_ino == os.stat(f"/proc/self/ns/{name}").st_ino:
            raise OSError(f"the chain's {name} namespace is this process's own: it was not made")
    for name in wanted:
        kind = NAMESPACES[name]
        if LIBC.setns(held[name], kind) != 0:
            raise OSError(ctypes.get_errno(), f"setns({name}): {os.strerror(ctypes.get_errno())}")
        if name == "mnt":  # entering a mount namespace puts the process at its real root: the chain's is a chroot
            os.fchdir(held["root"])
            os.chroot(".")
    for fd in held.values():
        os.close(fd)


class CapabilityHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class CapabilityData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop(uid: int | None) -> None:
    """Become `uid` (None: stay, as a user namespace's root) with no capability and no way back to any: what
    `setpriv --reuid --regid --clear-groups --no-new-privs --inh-caps=-all --bounding-set=-all` does, then checked."""
    for number in range(64):
        if LIBC.prctl(PR_CAPBSET_DROP, number, 0, 0, 0) != 0 and ctypes.get_errno() != 22:  # EINVAL: no such cap
            raise OSError(ctypes.get_errno(), f"dropping capability {number} from the bounding set")
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    LIBC.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    none = (CapabilityData * 2)()
    if LIBC.capset(ctypes.byref(CapabilityHeader(CAPABILITY_VERSION_3, 0)), none) != 0:
        raise OSError(ctypes.get_errno(), "capset")
    if LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "no_new_privs")
    check(uid)


def check(uid: int | None) -> None:
    """Refuse to go on unless /proc says: no capability in any set, no new privileges, and `uid` in every slot."""
    with open("/proc/self/status") as status:
        fields = dict(line.split(":", 1) for line in status.read().splitlines() if ":" in line)
    left = [name for name in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb") if int(fields[name], 16)]
    wrong = uid is not None and {int(value) for value in fields["Uid"].split() + fields["Gid"].split()} != {uid}
    if left or wrong or fields["NoNewPrivs"].strip() != "1":
        raise OSError(f"the warm parent kept privileges: {left or fields['Uid'].strip()}")


def serve_as_parent(config: dict[str, Any]) -> None:
    """Point the runtime's packages at this grading's copy of them (the same files), then be its warm parent."""
    runtime = config["runtime"]
    sys.path[0] = runtime  # the zygote's own copy, out of this root
    for package in ("autograde_runtime", "autograde_sandbox"):
        if package in sys.modules:
            sys.modules[package].__path__ = [os.path.join(runtime, package)]
    sys.path_importer_cache.clear()
    importlib.invalidate_caches()
    for name in config["preload"]:  # what the zygote has not imported (another rubric's)
        if name not in sys.modules:
            with contextlib.suppress(ImportError):
                importlib.import_module(name)
    from autograde_sandbox import confine

    from . import warm

    warm.parent(config, confine.confine)

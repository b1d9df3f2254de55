"""Layer: a seccomp filter, the system calls the worker may not make at all (unprivileged).

Applied by the worker to itself before any student code, like Landlock, for the
network that Landlock's ABI may not cover yet (UDP, Unix sockets by path, io_uring)
and for new namespaces:

* `socket()` fails for every family: no TCP, UDP, raw or Unix-socket connection
  (`socketpair()` stays, so pipes between the worker's own processes still work);
* `io_uring_setup()` fails (io_uring can open sockets without `socket()`);
* `unshare()`, `setns()` and a `clone()` asking for a new namespace fail, and
  `clone3()` says it does not exist (libc then falls back to `clone()`), as
  Docker's default profile does.

A system call from another ABI than the native one (i386 or x32 entry points on
x86_64) fails whatever it is: the filter sees other numbers there.

Standard library only: this module is copied into each grading sandbox beside the
runtime. The tests reuse `install` to take user namespaces away from a grader.
"""

import ctypes
import errno
import platform

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
RET_ALLOW, RET_ERRNO = 0x7FFF0000, 0x00050000
LOAD_WORD, JUMP_EQUAL, JUMP_GREATER_EQUAL, JUMP_SET, RETURN = 0x20, 0x15, 0x35, 0x45, 0x06
NR, ARCH, FIRST_ARGUMENT = 0, 4, 16  # offsets in struct seccomp_data (the low word of args[0] on little-endian)
X32_BIT = 0x40000000
NEW_NAMESPACES = 0x7E020000  # CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
CLONE_NEWUSER = 0x10000000

# (AUDIT_ARCH_*, {name: number}) for the machines the grader runs on
SAME_EVERYWHERE = {"io_uring_setup": 425, "clone3": 435, "landlock_create_ruleset": 444}
ARCHITECTURES = {
    "x86_64": (0xC000003E, {"socket": 41, "clone": 56, "unshare": 272, "setns": 308, **SAME_EVERYWHERE}),
    "aarch64": (0xC00000B7, {"socket": 198, "clone": 220, "unshare": 97, "setns": 268, **SAME_EVERYWHERE}),
}

# (system call, flags in its first argument or 0 for any call, errno)
WORKER_RULES = (
    ("socket", 0, errno.EACCES),
    ("io_uring_setup", 0, errno.EPERM),
    ("unshare", 0, errno.EPERM),
    ("setns", 0, errno.EPERM),
    ("clone", NEW_NAMESPACES, errno.EPERM),
    ("clone3", 0, errno.ENOSYS),
)
NO_USER_NAMESPACES = (  # what Docker's profile does to a process without CAP_SYS_ADMIN (tests/helpers/tiers.py)
    ("unshare", CLONE_NEWUSER, errno.EPERM),
    ("clone", CLONE_NEWUSER, errno.EPERM),
    ("clone3", 0, errno.ENOSYS),
)


class _Filter(ctypes.Structure):  # struct sock_filter
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _Program(ctypes.Structure):  # struct sock_fprog
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Filter))]


class Unavailable(OSError):
    """No seccomp filter on this machine (another architecture, or the kernel refused it)."""


def supported() -> bool:
    return platform.machine() in ARCHITECTURES


def program(rules: tuple[tuple[str, int, int], ...], machine: str | None = None) -> list[tuple[int, int, int, int]]:
    """The classic-BPF filter for `rules`, as (code, jump if true, jump if false, k) instructions."""
    arch, numbers = ARCHITECTURES[machine or platform.machine()]
    code = [(LOAD_WORD, 0, 0, ARCH), (JUMP_EQUAL, 1, 0, arch), (RETURN, 0, 0, RET_ERRNO | errno.ENOSYS)]
    code.append((LOAD_WORD, 0, 0, NR))
    if arch == ARCHITECTURES["x86_64"][0]:
        code += [(JUMP_GREATER_EQUAL, 0, 1, X32_BIT), (RETURN, 0, 0, RET_ERRNO | errno.ENOSYS)]
    for name, flags, error in rules:
        denied = (RETURN, 0, 0, RET_ERRNO | error)
        if flags:  # nr == name and (arg0 & flags) -> denied; the number is loaded again after the check
            code += [(JUMP_EQUAL, 0, 4, numbers[name]), (LOAD_WORD, 0, 0, FIRST_ARGUMENT)]
            code += [(JUMP_SET, 0, 1, flags), denied, (LOAD_WORD, 0, 0, NR)]
        else:
            code += [(JUMP_EQUAL, 0, 1, numbers[name]), denied]
    return [*code, (RETURN, 0, 0, RET_ALLOW)]


def install(rules: tuple[tuple[str, int, int], ...] = WORKER_RULES) -> None:
    """Filter this thread's system calls (and its future children's) by `rules`; irreversible."""
    if not supported():
        raise Unavailable(errno.ENOSYS, f"no seccomp filter for {platform.machine()}")
    code = program(rules)
    filters = (_Filter * len(code))(*(_Filter(*line) for line in code))
    fprog = _Program(len(code), filters)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise Unavailable(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        error = ctypes.get_errno()
        raise Unavailable(error, f"prctl(PR_SET_SECCOMP) failed: {errno.errorcode.get(error, error)}")

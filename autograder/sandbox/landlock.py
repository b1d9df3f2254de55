"""Layer: Landlock, the kernel's unprivileged file, network and signal sandbox (Linux 5.13+).

Applied by the worker to itself, before it imports anything of the student's: the
kernel then refuses, for the worker and every process it starts,

* any file access not granted below (read on the OS and interpreter folders minus the
  instructor's packages, read-write on the worker's scratch folder only);
* TCP bind and connect (ABI 4 and later);
* signals and abstract Unix sockets that reach outside the worker's own domain, the
  grader and the supervisor included (ABI 6 and later).

Standard library only: this module is copied into each grading sandbox beside the
runtime. The rights and structures are those of <linux/landlock.h>; the syscall
numbers 444-446 are the same on every architecture.
"""

import ctypes
import errno
import os
import stat

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM, REFER = 1 << 9, 1 << 10, 1 << 11, 1 << 12, 1 << 13
TRUNCATE, IOCTL_DEV = 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # the only rights a rule on a file may carry
READ = READ_FILE | READ_DIR | EXECUTE
LIST = READ_DIR  # a folder leading to granted entries: its names are listable, its files are not readable
READ_WRITE = READ | WRITE_FILE | TRUNCATE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_SYM | REFER


class Unavailable(OSError):
    """The kernel has no Landlock (too old, or not in the LSM list) or refused a step."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # packed in the kernel's header
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _syscall(number: int, *arguments: object) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    result = libc.syscall(number, *arguments)
    if result < 0:
        error = ctypes.get_errno()
        raise Unavailable(error, os.strerror(error))
    return result


def abi() -> int:
    """The kernel's Landlock ABI version; 0 where there is none."""
    try:
        return _syscall(CREATE_RULESET, None, 0, CREATE_RULESET_VERSION)
    except (Unavailable, AttributeError):
        return 0


def handled(version: int) -> tuple[int, int, int]:
    """What a ruleset of this ABI denies unless granted: (files, network, scopes)."""
    files = (1 << 13) - 1  # ABI 1: EXECUTE .. MAKE_SYM
    files |= REFER if version >= 2 else 0
    files |= TRUNCATE if version >= 3 else 0
    files |= IOCTL_DEV if version >= 5 else 0
    network = NET_BIND_TCP | NET_CONNECT_TCP if version >= 4 else 0
    scopes = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if version >= 6 else 0
    return files, network, scopes


def restrict(read: list[str], listed: list[str], read_write: list[str], devices: dict[str, int]) -> int:
    """Confine this thread and its future children; return the ABI in force.

    `read`: whole hierarchies to read and execute; `listed`: folders whose names (only) may be
    listed; `read_write`: hierarchies to change freely; `devices`: single files and their rights.
    A path that does not exist is left out. Call it before any other thread starts (a ruleset
    binds the calling thread and what it starts from then on).
    """
    version = abi()
    if version < 1:
        raise Unavailable(0, "this kernel has no Landlock (Linux 5.13+ with landlock in the LSM list)")
    files, network, scopes = handled(version)
    attr = _RulesetAttr(files, network, scopes)
    ruleset = _syscall(CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0)  # older kernels take zeros
    try:
        grants = [(path, READ) for path in read] + [(path, LIST) for path in listed]
        grants += [(path, READ_WRITE) for path in read_write] + list(devices.items())
        for path, rights in grants:
            _allow(ruleset, path, rights & files)
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        _syscall(RESTRICT_SELF, ruleset, 0)
    finally:
        os.close(ruleset)
    return version


def _allow(ruleset: int, path: str, rights: int) -> None:
    if os.path.realpath(path) != os.path.normpath(path) and os.path.lexists(path):
        # a rule opened through a link grants the link's target: never granted as such
        raise Unavailable(errno.ELOOP, f"{path} is reached through a symbolic link: it is not granted")
    try:
        handle = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return  # not on this machine (or not inside this root)
    try:
        if not stat.S_ISDIR(os.fstat(handle).st_mode):
            rights &= FILE_RIGHTS
        _syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(_PathBeneathAttr(rights, handle)), 0)
    finally:
        os.close(handle)

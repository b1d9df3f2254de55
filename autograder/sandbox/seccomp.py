"""Layer: a seccomp filter, the system calls the worker may not make at all (unprivileged).

Applied by the worker to itself before any student code, like Landlock, for the
network that Landlock's ABI may not cover yet (UDP, Unix sockets by path, io_uring)
and for new namespaces:

* `socket()` fails for every family: no TCP, UDP, raw or Unix-socket connection
  (`socketpair()` stays, so pipes between the worker's own processes still work);
* `io_uring_setup()` fails (io_uring can open sockets without `socket()`);
* `unshare()`, `setns()` and a `clone()` asking for a new namespace fail, and
  `clone3()` says it does not exist (libc then falls back to `clone()`), as
  Docker's default profile does;
* System V IPC (shared memory, message queues, semaphores), POSIX message queues and the kernel's
  keys fail (`SHARED_OBJECTS`): each outlives the process that made it and is reached by a number
  another process can guess, so a worker could leave memory behind or pass answers to the next
  grading. Where the worker has namespaces its IPC namespace is its own too; keys have no
  namespace of their own, and Docker's defaults give the worker none: the filter holds everywhere;
* every call that acts on another process by its id fails (`OTHER_PROCESSES`):
  its limits, priority, scheduling, memory, or a handle on it. Where the worker
  shares the grader's uid (no root, no user namespace), nothing else stops
  `prlimit64(grader, RLIMIT_CPU, 1)`. Each stays open for the caller itself (id
  0; for the calls that only read, also its own pid, which is its main thread's
  id: libgomp asks for its affinity that way).

A system call from another ABI than the native one (i386 or x32 entry points on
x86_64) fails whatever it is: the filter sees other numbers there.

Standard library only: this module is copied into each grading sandbox beside the
runtime. The tests reuse `install` to take user namespaces away from a grader.
"""

import ctypes
import errno
import os
import platform
from typing import Any

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
RET_ALLOW, RET_ERRNO = 0x7FFF0000, 0x00050000
LOAD_WORD, JUMP_EQUAL, JUMP_GREATER_EQUAL, JUMP_SET, RETURN = 0x20, 0x15, 0x35, 0x45, 0x06
NR, ARCH, FIRST_ARGUMENT = 0, 4, 16  # offsets in struct seccomp_data (the low word of args[0] on little-endian)
ARGUMENT_SIZE = 8  # args[n] is at FIRST_ARGUMENT + 8 n; a pid_t or an int is its low word, all the kernel reads
X32_BIT = 0x40000000
NEW_NAMESPACES = 0x7E020000  # CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
CLONE_NEWUSER = 0x10000000

# (AUDIT_ARCH_*, {name: number}) for the machines the grader runs on
SAME_EVERYWHERE = {
    "io_uring_setup": 425,
    "clone3": 435,
    "landlock_create_ruleset": 444,
    "pidfd_send_signal": 424,
    "pidfd_open": 434,
    "pidfd_getfd": 438,
    "process_madvise": 440,
    "process_mrelease": 448,
}
# from the kernel's tables: arch/x86/entry/syscalls/syscall_64.tbl and include/uapi/asm-generic/unistd.h
X86_64 = {
    "socket": 41, "clone": 56, "unshare": 272, "setns": 308, "ptrace": 101, "getpriority": 140,
    "setpriority": 141, "sched_setparam": 142, "sched_getparam": 143, "sched_setscheduler": 144,
    "sched_getscheduler": 145, "sched_rr_get_interval": 148, "sched_setaffinity": 203, "sched_getaffinity": 204,
    "ioprio_set": 251, "ioprio_get": 252, "migrate_pages": 256, "get_robust_list": 274, "move_pages": 279,
    "perf_event_open": 298, "prlimit64": 302, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312,
    "sched_setattr": 314, "sched_getattr": 315,
    "shmget": 29, "shmat": 30, "shmctl": 31, "shmdt": 67, "semget": 64, "semop": 65, "semctl": 66,
    "semtimedop": 220, "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "mq_open": 240,
    "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243, "mq_notify": 244, "mq_getsetattr": 245,
    "add_key": 248, "request_key": 249, "keyctl": 250,
}  # fmt: skip
AARCH64 = {
    "socket": 198, "clone": 220, "unshare": 97, "setns": 268, "ptrace": 117, "getpriority": 141,
    "setpriority": 140, "sched_setparam": 118, "sched_getparam": 121, "sched_setscheduler": 119,
    "sched_getscheduler": 120, "sched_rr_get_interval": 127, "sched_setaffinity": 122, "sched_getaffinity": 123,
    "ioprio_set": 30, "ioprio_get": 31, "migrate_pages": 238, "get_robust_list": 100, "move_pages": 239,
    "perf_event_open": 241, "prlimit64": 261, "process_vm_readv": 270, "process_vm_writev": 271, "kcmp": 272,
    "sched_setattr": 274, "sched_getattr": 275,
    "shmget": 194, "shmat": 196, "shmctl": 195, "shmdt": 197, "semget": 190, "semop": 193, "semctl": 191,
    "semtimedop": 192, "msgget": 186, "msgsnd": 189, "msgrcv": 188, "msgctl": 187, "mq_open": 180,
    "mq_unlink": 181, "mq_timedsend": 182, "mq_timedreceive": 183, "mq_notify": 184, "mq_getsetattr": 185,
    "add_key": 217, "request_key": 218, "keyctl": 219,
}  # fmt: skip
ARCHITECTURES = {
    "x86_64": (0xC000003E, {**X86_64, **SAME_EVERYWHERE}),
    "aarch64": (0xC00000B7, {**AARCH64, **SAME_EVERYWHERE}),
}

# A rule: (system call, test, errno). The test is an int, flags of the first argument (0: every call),
# or {argument: the values it may take}, every other value refused; SELF stands for the installer's pid.
SELF = "self"
CALLER = (0,)  # "this process" in every call below
CALLER_OR_SELF = (0, SELF)  # ... and its own pid, for calls that only read (never set: a child has another pid)
PRIO_PROCESS, IOPRIO_WHO_PROCESS = 0, 1  # a process group or a user reaches others: refused
WORKER_RULES = (
    ("socket", 0, errno.EACCES),
    ("io_uring_setup", 0, errno.EPERM),
    ("unshare", 0, errno.EPERM),
    ("setns", 0, errno.EPERM),
    ("clone", NEW_NAMESPACES, errno.EPERM),
    ("clone3", 0, errno.ENOSYS),
)
# what outlives a process, by a number another can reach: EPERM, which the student's feedback explains
SHARED_OBJECTS = tuple(
    (name, 0, errno.EPERM)
    for name in (
        "shmget", "shmat", "shmctl", "shmdt", "semget", "semop", "semctl", "semtimedop",
        "msgget", "msgsnd", "msgrcv", "msgctl",
        "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
        "add_key", "request_key", "keyctl",
    )
)  # fmt: skip
OTHER_PROCESSES = (
    ("prlimit64", {0: CALLER}, errno.EPERM),  # glibc's setrlimit and getrlimit pass 0
    ("setpriority", {0: (PRIO_PROCESS,), 1: CALLER}, errno.EPERM),
    ("getpriority", {0: (PRIO_PROCESS,), 1: CALLER_OR_SELF}, errno.EPERM),
    ("sched_setaffinity", {0: CALLER}, errno.EPERM),
    ("sched_getaffinity", {0: CALLER_OR_SELF}, errno.EPERM),  # torch asks with 0
    ("sched_setscheduler", {0: CALLER}, errno.EPERM),
    ("sched_getscheduler", {0: CALLER_OR_SELF}, errno.EPERM),
    ("sched_setparam", {0: CALLER}, errno.EPERM),
    ("sched_getparam", {0: CALLER_OR_SELF}, errno.EPERM),
    ("sched_setattr", {0: CALLER}, errno.EPERM),
    ("sched_getattr", {0: CALLER_OR_SELF}, errno.EPERM),
    ("sched_rr_get_interval", {0: CALLER_OR_SELF}, errno.EPERM),
    ("ioprio_set", {0: (IOPRIO_WHO_PROCESS,), 1: CALLER}, errno.EPERM),
    ("ioprio_get", {0: (IOPRIO_WHO_PROCESS,), 1: CALLER_OR_SELF}, errno.EPERM),
    ("migrate_pages", {0: CALLER}, errno.EPERM),
    ("move_pages", {0: CALLER}, errno.EPERM),
    ("get_robust_list", {0: CALLER}, errno.EPERM),
    ("ptrace", 0, errno.EPERM),
    ("process_vm_readv", 0, errno.EPERM),
    ("process_vm_writev", 0, errno.EPERM),
    ("process_madvise", 0, errno.EPERM),
    ("process_mrelease", 0, errno.EPERM),
    ("kcmp", 0, errno.EPERM),
    ("perf_event_open", 0, errno.EACCES),  # as the kernel answers where perf_event_paranoid forbids it
    ("pidfd_open", 0, errno.ENOSYS),  # as a kernel without pidfds: callers fall back to waitpid
    ("pidfd_getfd", 0, errno.EPERM),
    ("pidfd_send_signal", 0, errno.ENOSYS),
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


Rule = tuple[str, Any, int]
Instruction = tuple[int, int, int, int]


def program(rules: tuple[Rule, ...], machine: str | None = None, pid: int = 0) -> list[Instruction]:
    """The classic-BPF filter for `rules`, as (code, jump if true, jump if false, k) instructions;
    `pid` is the installer's, for the rules that name SELF (0: none)."""
    arch, numbers = ARCHITECTURES[machine or platform.machine()]
    code = [(LOAD_WORD, 0, 0, ARCH), (JUMP_EQUAL, 1, 0, arch), (RETURN, 0, 0, RET_ERRNO | errno.ENOSYS)]
    code.append((LOAD_WORD, 0, 0, NR))
    if arch == ARCHITECTURES["x86_64"][0]:
        code += [(JUMP_GREATER_EQUAL, 0, 1, X32_BIT), (RETURN, 0, 0, RET_ERRNO | errno.ENOSYS)]
    for name, test, error in rules:
        denied = (RETURN, 0, 0, RET_ERRNO | error)
        if isinstance(test, dict):  # nr == name: the arguments decide, allowed or denied, nothing further
            block = only(test, pid, denied)
            code += [(JUMP_EQUAL, 0, len(block), numbers[name]), *block]
        elif test:  # nr == name and (arg0 & flags) -> denied; the number is loaded again after the check
            code += [(JUMP_EQUAL, 0, 4, numbers[name]), (LOAD_WORD, 0, 0, FIRST_ARGUMENT)]
            code += [(JUMP_SET, 0, 1, test), denied, (LOAD_WORD, 0, 0, NR)]
        else:
            code += [(JUMP_EQUAL, 0, 1, numbers[name]), denied]
    return [*code, (RETURN, 0, 0, RET_ALLOW)]


def only(allowed: dict[int, tuple[Any, ...]], pid: int, denied: Instruction) -> list[Instruction]:
    """Allow the call when each argument takes one of its values; deny it otherwise."""
    checks = []
    for argument, values in allowed.items():
        words = list(dict.fromkeys(pid if value == SELF else value for value in values if value != SELF or pid))
        checks.append([(LOAD_WORD, 0, 0, FIRST_ARGUMENT + ARGUMENT_SIZE * argument), *words])
    block: list[Instruction] = []
    end = sum(len(check) for check in checks)  # where RET_ALLOW goes, denied right after it
    for load, *words in checks:
        block.append(load)
        for number, word in enumerate(words):
            last = number == len(words) - 1  # equal: the next argument's check; else the next value, or denied
            after = len(block) + 1
            block.append((JUMP_EQUAL, len(words) - number - 1, end + 1 - after if last else 0, word))
    return [*block, (RETURN, 0, 0, RET_ALLOW), denied]


def install(rules: tuple[Rule, ...] = WORKER_RULES + SHARED_OBJECTS + OTHER_PROCESSES) -> None:
    """Filter this thread's system calls (and its future children's) by `rules`; irreversible."""
    if not supported():
        raise Unavailable(errno.ENOSYS, f"no seccomp filter for {platform.machine()}")
    code = program(rules, pid=os.getpid())
    filters = (_Filter * len(code))(*(_Filter(*line) for line in code))
    fprog = _Program(len(code), filters)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise Unavailable(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        error = ctypes.get_errno()
        raise Unavailable(error, f"prctl(PR_SET_SECCOMP) failed: {errno.errorcode.get(error, error)}")

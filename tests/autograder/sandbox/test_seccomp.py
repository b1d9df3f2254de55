"""The seccomp layer: the filter program decides as it should on every architecture, and a real process obeys it."""

import errno
import json
import subprocess
import sys

import pytest
from attempt import ATTEMPT

from autograder.sandbox import seccomp


def run_filter(code: list[tuple[int, int, int, int]], arch: int, number: int, *arguments: int) -> int:
    """Classic BPF, as the kernel runs a seccomp filter over (nr, arch, args[...]): the value it returns."""
    data = {seccomp.NR: number, seccomp.ARCH: arch}
    for index in range(6):
        value = arguments[index] if index < len(arguments) else 0
        data[seccomp.FIRST_ARGUMENT + seccomp.ARGUMENT_SIZE * index] = value & 0xFFFFFFFF  # the low word
    accumulator, pc = 0, 0
    while True:
        op, true, false, k = code[pc]
        if op == seccomp.LOAD_WORD:
            accumulator = data[k]
        elif op == seccomp.RETURN:
            return k
        else:
            taken = {
                seccomp.JUMP_EQUAL: accumulator == k,
                seccomp.JUMP_GREATER_EQUAL: accumulator >= k,
                seccomp.JUMP_SET: bool(accumulator & k),
            }[op]
            assert true >= 0 and false >= 0 and pc + 1 + max(true, false) < len(code), "a jump out of the program"
            pc += true if taken else false
        pc += 1


@pytest.mark.parametrize("machine", sorted(seccomp.ARCHITECTURES))
def test_its_worker_filter_refuses_sockets_and_namespaces_and_allows_the_rest(machine):
    arch, numbers = seccomp.ARCHITECTURES[machine]
    code = seccomp.program(seccomp.WORKER_RULES, machine)
    denied = seccomp.RET_ERRNO
    assert run_filter(code, arch, numbers["socket"], 2) == denied | errno.EACCES
    assert run_filter(code, arch, numbers["unshare"], 0) == denied | errno.EPERM
    assert run_filter(code, arch, numbers["clone"], 0x10000000 | 17) == denied | errno.EPERM  # CLONE_NEWUSER
    assert run_filter(code, arch, numbers["clone"], 0x01200011) == seccomp.RET_ALLOW  # what fork() asks
    assert run_filter(code, arch, numbers["clone3"]) == denied | errno.ENOSYS
    assert run_filter(code, arch, numbers["io_uring_setup"]) == denied | errno.EPERM
    assert run_filter(code, arch, 0) == seccomp.RET_ALLOW  # read / io_setup: every other call goes through
    assert run_filter(code, arch + 1, 0) == denied | errno.ENOSYS  # another ABI's numbers mean other calls


OWN, OTHER = 4321, 1234  # the installer's pid, and another process's


@pytest.mark.parametrize("machine", sorted(seccomp.ARCHITECTURES))
def test_its_worker_filter_keeps_every_call_on_a_process_to_the_caller(machine):
    arch, numbers = seccomp.ARCHITECTURES[machine]
    code = seccomp.program(seccomp.WORKER_RULES + seccomp.OTHER_PROCESSES, machine, pid=OWN)
    for name, test, error in seccomp.OTHER_PROCESSES:
        refused = seccomp.RET_ERRNO | error
        if not isinstance(test, dict):
            assert run_filter(code, arch, numbers[name], 0, 0) == refused, name
            continue
        for argument, values in test.items():
            allowed = [OWN if value == seccomp.SELF else value for value in values]
            for value in allowed:
                assert run_filter(code, arch, numbers[name], *call(test, argument, value)) == seccomp.RET_ALLOW, name
            for value in {OTHER, 2, -1, 1 << 32 | OTHER, OWN} - set(allowed):  # a set call: not even its own pid
                assert run_filter(code, arch, numbers[name], *call(test, argument, value)) == refused, (name, value)
    assert run_filter(code, arch, numbers["socket"], 2) == seccomp.RET_ERRNO | errno.EACCES  # the rules before


def call(test: dict, argument: int, value: int) -> list[int]:
    """Arguments of a call: `value` for `argument`, the first value each other argument may take."""
    first = {index: OWN if values[0] == seccomp.SELF else values[0] for index, values in test.items()}
    return [value if index == argument else first.get(index, 0) for index in range(max(test) + 1)]


def test_its_filter_refuses_the_x32_entry_points_on_x86_64():
    arch, numbers = seccomp.ARCHITECTURES["x86_64"]
    code = seccomp.program(seccomp.WORKER_RULES, "x86_64")
    assert run_filter(code, arch, seccomp.X32_BIT | numbers["socket"]) == seccomp.RET_ERRNO | errno.ENOSYS


def test_its_docker_like_filter_refuses_only_user_namespaces():
    arch, numbers = seccomp.ARCHITECTURES["x86_64"]
    code = seccomp.program(seccomp.NO_USER_NAMESPACES, "x86_64")
    assert run_filter(code, arch, numbers["unshare"], seccomp.CLONE_NEWUSER) == seccomp.RET_ERRNO | errno.EPERM
    assert run_filter(code, arch, numbers["unshare"], 0x00020000) == seccomp.RET_ALLOW  # a mount namespace
    assert run_filter(code, arch, numbers["socket"], 2) == seccomp.RET_ALLOW


CHILD = (
    ATTEMPT
    + """
import socket, subprocess
from autograder.sandbox import seccomp
seccomp.install()
print(attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)))
print(attempt(lambda: socket.socket(socket.AF_UNIX)))
print(attempt(lambda: socket.socketpair()))
print(subprocess.run(["unshare", "--user", "true"], capture_output=True).returncode)
print(subprocess.run(["true"]).returncode)
"""
)


@pytest.mark.skipif(not seccomp.supported(), reason="no filter written for this architecture")
def test_it_holds_a_real_process_and_every_process_it_starts():
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["PermissionError", "PermissionError", "allowed", "1", "0"], done.stderr


TRIES = (
    ATTEMPT
    + """
import ctypes, json, os, resource, sys
from autograder.sandbox import seccomp
libc = ctypes.CDLL(None, use_errno=True)
def invalid_prlimit(target):  # soft above hard: EINVAL once the kernel let it through (Python refuses it before)
    if libc.prlimit(target, resource.RLIMIT_CPU, (ctypes.c_uint64 * 2)(2, 1), None) != 0:
        raise OSError(ctypes.get_errno(), "prlimit")
victim, rules = int(sys.argv[1]), sys.argv[2]
parent = os.getppid()
cpus = os.sched_getaffinity(0)
if rules == "filtered":
    seccomp.install()
def tries(target):
    # each is harmless where it gets through: an invalid limit or an empty affinity (EINVAL, "OSError" below)
    # or the priority the target already has
    nice = os.getpriority(os.PRIO_PROCESS, target) if rules != "filtered" else 0
    return {
        "prlimit": attempt(lambda: invalid_prlimit(target)),
        "getrlimit": attempt(lambda: resource.prlimit(target, resource.RLIMIT_CPU)),
        "setpriority": attempt(lambda: os.setpriority(os.PRIO_PROCESS, target, nice)),
        "getpriority": attempt(lambda: os.getpriority(os.PRIO_PROCESS, target)),
        "sched_setaffinity": attempt(lambda: os.sched_setaffinity(target, [])),
        "sched_getaffinity": attempt(lambda: os.sched_getaffinity(target)),
        "sched_setscheduler": attempt(lambda: os.sched_setscheduler(target, os.SCHED_OTHER, os.sched_param(0))),
        "sched_getparam": attempt(lambda: os.sched_getparam(target)),
    }
found = {"victim": tries(victim), "parent": tries(parent), "own pid": tries(os.getpid()), "0": tries(0)}
found["own group"] = attempt(lambda: os.getpriority(os.PRIO_PGRP, 0))
found["own limits"] = attempt(lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0)))
found["own affinity"] = attempt(lambda: os.sched_setaffinity(0, cpus))
found["os.cpu_count"] = os.cpu_count()
child = os.fork()
if child == 0:  # a child of the filtered process, on the process that installed the filter
    os.write(1, json.dumps(tries(parent)).encode() + b"\\n")
    os._exit(0)
os.waitpid(child, 0)
print(json.dumps(found))
"""
)
REACHES = {"prlimit", "setpriority", "sched_setaffinity", "sched_setscheduler"}  # what changes another process
READS = {"getrlimit", "getpriority", "sched_getaffinity", "sched_getparam"}


def tried(rules: str) -> tuple[dict, dict]:
    """Run TRIES (`rules`: "filtered" or "none") beside a victim process; what the child and its own child met."""
    with subprocess.Popen(["sleep", "60"]) as victim:
        try:
            done = subprocess.run(
                [sys.executable, "-c", TRIES, str(victim.pid), rules], capture_output=True, text=True, timeout=60
            )
        finally:
            victim.kill()
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and len(lines) == 2, done.stderr
    return json.loads(lines[1]), json.loads(lines[0])


@pytest.mark.skipif(not seccomp.supported(), reason="no filter written for this architecture")
def test_it_refuses_every_call_on_another_process_and_keeps_those_on_itself():
    found, from_its_child = tried("filtered")
    for target in ("victim", "parent"):
        assert found[target] == dict.fromkeys(REACHES | READS, "PermissionError"), (target, found)
    assert from_its_child == dict.fromkeys(REACHES | READS, "PermissionError"), from_its_child
    assert {name: found["0"][name] for name in READS} == dict.fromkeys(READS, "allowed"), found
    assert {name: found["own pid"][name] for name in READS - {"getrlimit"}} == dict.fromkeys(
        READS - {"getrlimit"}, "allowed"
    ), found  # the reads libraries make with their own pid (the main thread's id)
    assert found["0"]["prlimit"] == "OSError" and found["0"]["sched_setaffinity"] == "OSError"  # reached: EINVAL
    assert found["own group"] == "PermissionError"  # a process group holds others too
    assert found["own limits"] == found["own affinity"] == "allowed" and found["os.cpu_count"], found


@pytest.mark.skipif(not seccomp.supported(), reason="no filter written for this architecture")
def test_its_other_process_test_would_see_a_process_reached_without_the_filter():
    found, _ = tried("none")
    assert found["victim"]["prlimit"] == "OSError" and found["victim"]["sched_setaffinity"] == "OSError", found
    assert found["victim"]["setpriority"] == "allowed" and found["parent"]["getpriority"] == "allowed", found


@pytest.mark.parametrize("machine", sorted(seccomp.ARCHITECTURES))
def test_its_filter_refuses_every_object_that_outlives_a_process(machine):
    arch, numbers = seccomp.ARCHITECTURES[machine]
    code = seccomp.program(seccomp.WORKER_RULES + seccomp.SHARED_OBJECTS + seccomp.OTHER_PROCESSES, machine)
    for name, _, error in seccomp.SHARED_OBJECTS:
        assert run_filter(code, arch, numbers[name], 0) == seccomp.RET_ERRNO | error == seccomp.RET_ERRNO | errno.EPERM
    assert run_filter(code, arch, numbers["shmget"] + 1000, 0) == seccomp.RET_ALLOW


SHARED = (
    ATTEMPT
    + """
import ctypes, os, sys
from autograder.sandbox import seccomp
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
IPC_PRIVATE, IPC_CREAT, IPC_RMID = 0, 0o1000, 0
KEY_SPEC_PROCESS_KEYRING = -2
def called(number, *args):
    def call():
        if libc.syscall(number, *args) < 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return call
numbers = seccomp.ARCHITECTURES[os.uname().machine][1]
if sys.argv[1] == "filtered":
    seccomp.install()
segment = libc.syscall(numbers["shmget"], IPC_PRIVATE, 4096, IPC_CREAT | 0o600)
if segment >= 0:
    libc.syscall(numbers["shmctl"], segment, IPC_RMID, None)  # made by the unfiltered run: removed at once
print("allowed" if segment >= 0 else "PermissionError" if ctypes.get_errno() == 1 else ctypes.get_errno())
if sys.argv[1] != "filtered":
    sys.exit()  # only the segment, removed: the others would outlive this test
print(attempt(called(numbers["msgget"], IPC_PRIVATE, IPC_CREAT | 0o600)))
print(attempt(called(numbers["semget"], IPC_PRIVATE, 1, IPC_CREAT | 0o600)))
print(attempt(called(numbers["mq_open"], b"autograde-test", os.O_RDONLY, 0o600, None)))
print(attempt(called(numbers["add_key"], b"user", b"autograde-test", b"x", 1, KEY_SPEC_PROCESS_KEYRING)))
print(attempt(called(numbers["keyctl"], 0, KEY_SPEC_PROCESS_KEYRING, 0)))
"""
)


@pytest.mark.skipif(not seccomp.supported(), reason="no filter written for this architecture")
def test_a_filtered_process_makes_no_shared_memory_message_queue_semaphore_or_key():
    done = subprocess.run([sys.executable, "-c", SHARED, "filtered"], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["PermissionError"] * 6, done.stdout + done.stderr
    unfiltered = subprocess.run([sys.executable, "-c", SHARED, "open"], capture_output=True, text=True, timeout=60)
    assert unfiltered.stdout.split() == ["allowed"], unfiltered.stdout + unfiltered.stderr

"""The seccomp layer: the filter program decides as it should on every architecture, and a real process obeys it."""

import errno
import subprocess
import sys

import pytest
from attempt import ATTEMPT

from autograder.sandbox import seccomp


def run_filter(code: list[tuple[int, int, int, int]], arch: int, number: int, first: int = 0) -> int:
    """Classic BPF, as the kernel runs a seccomp filter over (nr, arch, args[0]): the value it returns."""
    data = {seccomp.NR: number, seccomp.ARCH: arch, seccomp.FIRST_ARGUMENT: first}
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

"""The supervisor: whatever ends the worker, every process the worker started ends with it."""

import os
import secrets
import signal
import subprocess
import sys
import time

import pytest
from attack_suite import processes_with

from autograder.sandbox.layers import SUPERVISOR

# double-forks a sleeper into a session of its own (out of the worker's group), then goes on as told
ESCAPE = (
    "import os, sys, time\n"
    "if os.fork() == 0:\n"
    "    if os.fork() == 0:\n"
    "        os.setsid(); os.execvp('sleep', ['sleep', '60.' + sys.argv[1]])\n"
    "    os._exit(0)\n"
    "os.wait()\n"
    "while not any(sys.argv[1].encode() in open(f'/proc/{p}/cmdline', 'rb').read()\n"
    "              for p in os.listdir('/proc') if p.isdigit() and os.path.exists(f'/proc/{p}/cmdline')):\n"
    "    time.sleep(0.01)\n"
    "print('escaped', flush=True)\n"
    "if sys.argv[2] == 'hang': time.sleep(60)\n"
    "os._exit(int(sys.argv[2]) if sys.argv[2].isdigit() else 0)\n"
)


def supervised(token: str, then: str, grader: str = "", prelude: str = "") -> list[str]:
    grader = grader or str(os.getpid())
    worker = [sys.executable, "-c", prelude + ESCAPE, token, then]
    return [sys.executable, "-I", "-S", str(SUPERVISOR), grader, "", "--", *worker]


MARKS: list[str] = []  # every sleeper's mark, to clean up after a failed test


def token() -> str:
    MARKS.append(str(secrets.randbelow(10**9) + 10**9))
    return MARKS[-1]


def test_it_kills_what_the_worker_left_when_the_worker_ends_and_passes_its_status_on():
    mark = token()
    done = subprocess.run(supervised(mark, "3"), capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "escaped", done.stderr
    assert done.returncode == 3
    assert processes_with(mark) == []


def test_it_kills_the_worker_and_what_it_started_when_the_grader_asks():
    mark = token()
    process = subprocess.Popen(supervised(mark, "hang"), stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "escaped"
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 128 + signal.SIGKILL  # the worker was killed: as a shell says it
    assert processes_with(mark) == []


STAND_IN = (
    "import os, subprocess, sys; subprocess.run([str(os.getpid()) if a == 'GRADER' else a for a in sys.argv[1:]])"
)


def test_it_kills_everything_when_the_grader_dies():
    mark = token()
    grader = subprocess.Popen(  # a stand-in grader that starts the supervisor, then is killed
        [sys.executable, "-c", STAND_IN, *supervised(mark, "hang", "GRADER")],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert grader.stdout.readline().strip() == "escaped"
    grader.kill()
    grader.wait()
    deadline = time.monotonic() + 30  # the parent-death signal arrives at once; this only bounds a failure
    while processes_with(mark) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(mark) == []


@pytest.fixture(autouse=True)
def no_leftovers():
    yield
    for mark in MARKS:
        for pid in processes_with(mark):
            os.kill(pid, signal.SIGKILL)


# what a worker without the seccomp filter could do to a supervisor of its uid: no descriptor left to it
NO_DESCRIPTORS = "import os, resource; resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE, (0, 0))\n"


def test_it_kills_what_the_worker_left_even_with_no_descriptor_left_to_open():
    mark = token()
    done = subprocess.run(supervised(mark, "0", prelude=NO_DESCRIPTORS), capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "escaped", done.stderr
    assert processes_with(mark) == []

"""After a worker: the grader finds what is left of its processes by their existence, kills it, and says so."""

import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from attack_suite import processes_with
from support import ROOT

from autograder.sandbox import ipc, leftovers, record, uid
from autograder.sandbox.leftovers import ADOPTED, CGROUP, IPC, KEYS, UID, Leftovers, Trace

# a process the supervisor lost: double-forked, in a session of its own, every catchable signal ignored,
# under the worker's seccomp filter (or its uid); the middle process ends, so the grader adopts the last one
LOST = (
    "import os, signal, sys, time\n"
    "sys.path.insert(0, sys.argv[2])\n"
    "if sys.argv[3] == 'filtered':\n"
    "    from autograder.sandbox import seccomp\n"
    "    seccomp.install()\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    for number in signal.valid_signals() - {signal.SIGKILL, signal.SIGSTOP}:\n"
    "        try: signal.signal(number, signal.SIG_IGN)\n"
    "        except (OSError, ValueError): pass\n"
    "    open(sys.argv[4], 'w').close()\n"  # ready: every signal it can ignore is ignored
    "    time.sleep(60)\n"
    "    os._exit(0)\n"
    "os._exit(0)\n"
)


@pytest.fixture(autouse=True)
def subreaper() -> None:
    leftovers.adopt()  # as the grader does when it starts a worker


def lose(mark: str, how: str, prefix: tuple[str, ...] = ()) -> int:
    """Start a lost process (its command line holds `mark`); its pid once it ignores what it can."""
    folder = Path(tempfile.mkdtemp(prefix="autograde-test-"))  # under /tmp, open to the worker's uid
    folder.chmod(0o777)
    ready = folder / "ready"
    subprocess.run([*prefix, sys.executable, "-c", LOST, mark, str(ROOT), how, str(ready)], check=True, timeout=60)
    wait_for(ready.exists, f"the lost process {mark} never said it was ready")
    shutil.rmtree(folder)
    [pid] = wait_for(lambda: processes_with(mark), f"no process with {mark}")
    return pid


def wait_for(find, what: str):
    """What `find` finds, once it finds something; a failure, not a hang, if it never does (a guard, not a
    measure: two minutes is far beyond what a process start takes on the busiest machine)."""
    deadline = time.monotonic() + 120
    while not (found := find()):
        if time.monotonic() > deadline:
            pytest.fail(what)
        time.sleep(0.01)
    return found


def test_it_finds_and_kills_a_process_its_supervisor_lost_that_carries_the_workers_filter():
    mark = f"lost-{secrets.token_hex(6)}"
    pid = lose(mark, "filtered")
    assert leftovers.status(pid)["PPid"] == str(os.getpid())  # adopted: this process is a subreaper
    assert leftovers.clear(Trace(filtered=True)) == Leftovers((ADOPTED,), {ADOPTED: 1})
    assert processes_with(mark) == []


def test_a_process_killed_and_not_yet_ended_is_waited_for_but_not_counted_as_outliving_the_worker(monkeypatch):
    mark = f"dying-{secrets.token_hex(6)}"
    pid = lose(mark, "filtered")
    monkeypatch.setattr(leftovers, "dying", lambda found, fields: found == pid)  # the supervisor killed it
    assert leftovers.clear(Trace(filtered=True)) == Leftovers((ADOPTED,), {ADOPTED: 0})
    assert processes_with(mark) == []  # waited for (and killed) all the same


def test_it_reads_a_pending_sigkill_or_the_kernels_exiting_flag_as_dying():
    assert leftovers.dying(os.getpid(), {"SigPnd": "0000000000000100", "ShdPnd": "0000000000000000"})
    assert leftovers.dying(os.getpid(), {"SigPnd": "0000000000000000", "ShdPnd": "0000000000000100"})
    assert not leftovers.dying(os.getpid(), {"SigPnd": "0000000000004000", "ShdPnd": "0000000000000000"})  # SIGTERM
    assert leftovers.stat_flags(os.getpid()) & leftovers.PF_EXITING == 0  # this process is not in exit
    assert leftovers.stat_flags(2**22 + 1) == 0  # no such process: no flags


def test_it_never_takes_a_process_the_grader_started_itself():
    mark = f"own-{secrets.token_hex(6)}"
    own = subprocess.Popen([sys.executable, "-c", "import time, sys; time.sleep(60)", mark])
    try:
        assert leftovers.clear(Trace(filtered=True)) == Leftovers((ADOPTED,), {ADOPTED: 0})
        assert own.poll() is None
    finally:
        own.kill()
        own.wait()


@pytest.mark.skipif(not uid.possible(), reason="a uid of the worker's own needs a root grader")
def test_it_finds_and_kills_every_process_of_the_workers_uid():
    mark = f"uid-{secrets.token_hex(6)}"
    lease = uid.Lease()
    try:
        before = ipc.keys(lease.uid)  # as a worker counts them: the uid may keep an earlier test's empty keyring
        lose(mark, "plain", tuple(uid.command(lease.uid)))
        found = leftovers.clear(Trace(uid=lease.uid, keys_before=before))
        assert found == Leftovers((UID, IPC, KEYS), {UID: 1, IPC: 0, KEYS: 0})
        assert processes_with(mark) == []
    finally:
        lease.release()


# what a worker whose seccomp layer failed could leave as its uid: a shared memory segment of 64 MiB (memory no
# cgroup counts), a message queue with a message in it, a semaphore set, and a key in its user keyring
OUTLASTING = (
    "import ctypes, os\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "libc.syscall.restype = ctypes.c_long\n"
    "segment = libc.shmget(0, 64 << 20, 0o1000 | 0o666)\n"
    "queue = libc.msgget(0, 0o1000 | 0o666)\n"
    "message = (ctypes.c_long * 2)(1, 42)\n"
    "sent = libc.msgsnd(queue, message, 8, 0)\n"
    "semaphores = libc.semget(0, 1, 0o1000 | 0o666)\n"
    "key = libc.syscall({add_key}, b'user', b'autograde-test', b'answer', 6, -4)\n"
    "print(min(segment, queue, sent, semaphores, key) >= 0)\n"
)


@pytest.mark.skipif(not uid.possible(), reason="a uid of the worker's own needs a root grader")
def test_it_removes_the_system_v_objects_and_keys_of_the_workers_uid_and_counts_them():
    from autograder.sandbox import seccomp

    lease = uid.Lease()
    try:
        before = ipc.keys(lease.uid)
        code = OUTLASTING.format(add_key=seccomp.ARCHITECTURES[os.uname().machine][1]["add_key"])
        made = subprocess.run([*uid.command(lease.uid), sys.executable, "-c", code], capture_output=True, text=True)
        assert made.stdout.split() == ["True"], made.stdout + made.stderr
        assert sorted(item.kind for item in ipc.objects(lease.uid)) == ["msg", "sem", "shm"]
        left = leftovers.clear(Trace(uid=lease.uid, keys_before=before))
        assert left.found[IPC] == 3 and left.found[KEYS] >= 1 and not left.proven_none, left
        assert "3 System V object(s)" in str(left) and "kernel key(s)" in str(left)
        assert ipc.objects(lease.uid) == []
        assert wait_for(lambda: ipc.keys(lease.uid) <= max(before, 1) or None, "the uid's key stayed")
        later = leftovers.clear(Trace(uid=lease.uid, keys_before=ipc.keys(lease.uid)))
        assert later.found[IPC] == 0 and later.found[KEYS] == 0, later  # what the kernel keeps is no leftover
    finally:
        lease.release()


def test_nothing_checked_proves_nothing():
    assert not Leftovers().proven_none
    assert Leftovers((ADOPTED,), {ADOPTED: 0}).proven_none
    assert not Leftovers((ADOPTED,), {ADOPTED: 2}).proven_none


def test_the_record_says_a_process_outlived_a_worker_only_once_found_and_keeps_it_through_results_json():
    held = record.Isolation(no_process_outlives=True)
    clean = held.looked_after(Leftovers((UID, ADOPTED), {UID: 0, ADOPTED: 0}))
    assert clean.no_process_outlives
    found = clean.looked_after(Leftovers((ADOPTED,), {ADOPTED: 1}))
    assert not found.no_process_outlives
    assert found.left_behind == Leftovers((UID, ADOPTED), {UID: 0, ADOPTED: 1})
    assert "1 process(es) outlived the worker" in found.summary()
    assert record.from_dict(found.as_dict()).left_behind == found.left_behind
    assert not record.from_dict(found.as_dict()).no_process_outlives


def test_a_killed_process_is_signalled_by_sigkill_whatever_it_ignores():
    mark = f"ignores-{secrets.token_hex(6)}"
    pid = lose(mark, "filtered")
    os.kill(pid, signal.SIGTERM)  # ignored: it lives on
    assert processes_with(mark) == [pid]
    leftovers.clear(Trace(filtered=True))
    assert processes_with(mark) == []


# it returns once the last process has exec'd (its command line then holds the mark): the pipe's write end
# closes on exec (Python's descriptors are close-on-exec), and the worker reads until every copy is closed
LEAVE = (
    "import os, signal, sys, time\n"
    "def leave(mark):\n"
    "    read, write = os.pipe()\n"
    "    if os.fork() == 0:\n"
    "        os.setsid()\n"
    "        if os.fork() == 0:\n"
    "            for number in signal.valid_signals() - {signal.SIGKILL, signal.SIGSTOP}:\n"
    "                try: signal.signal(number, signal.SIG_IGN)\n"
    "                except (OSError, ValueError): pass\n"
    "            os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(60)', mark])\n"
    "        os._exit(0)\n"
    "    os.close(write)\n"
    "    os.wait()\n"
    "    os.read(read, 1)\n"
    "    return 1\n"
)


def test_a_worker_that_left_a_process_is_looked_after_by_every_mark_its_layers_give():
    from autograder.sandbox import Worker, probe
    from autograder.student import Remote

    mark = f"left-{secrets.token_hex(6)}"
    plan = probe.found()[0]
    with tempfile.TemporaryDirectory(prefix="autograde-test-") as folder:  # under /tmp: a worker's uid reaches it
        package = Path(folder) / "submission" / "exercises"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "leave.py").write_text(LEAVE)
        with Worker(package.parent, Path(folder)) as worker:
            assert Remote(worker).run("leave.leave", mark).value == 1
            assert processes_with(mark) != []  # alive while the worker is
        left = worker.isolation.left_behind
    marks = ((CGROUP, plan.cgroup), (UID, plan.uid), (ADOPTED, plan.seccomp), (IPC, plan.uid), (KEYS, plan.uid))
    wanted = [name for name, on in marks if on]
    assert left is not None and list(left.checked) == wanted, left
    assert left.proven_none, left  # the supervisor ended it first: the grader found nothing of it
    assert processes_with(mark) == []

"""The worker process: isolated, bounded, killed with everything it started.

The OS-level protections are checked in every situation (tier) this machine can produce
(tests/helpers/tiers.py): each holds exactly where the tier's kernel allows it.
"""

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import tiers
from attack_suite import processes_with
from support import ROOT, SOLUTIONS

from autograder.runtime.bounds import Budget
from autograder.runtime.codec import Unsupported
from autograder.sandbox import Isolation, Worker, WorkerLimits, layers, probe, zygote
from autograder.sandbox.worker import COLD_WORKER
from autograder.scrub import Fragments, Scrubber
from autograder.student import Died, Raised, Remote

PROBE = """
import os, subprocess, sys, time

def environment():
    return {"path": list(sys.path), "env": dict(os.environ), "flags": [sys.flags.isolated, sys.flags.no_site]}

def loaded(name):
    return name in sys.modules

def importable(name):
    try:
        __import__(name)
        return True
    except ImportError:
        return False

def shout(n):
    print("x" * n)
    return n

def bomb():
    import torch
    return torch.ones(2**34).sum()  # 64 GiB

def read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except OSError as error:
        return type(error).__name__

def connect(port):
    import socket
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return "connected"
    except OSError as error:
        return type(error).__name__

def write(path):
    with open(path, "w") as handle:
        handle.write("written by the worker")
    return True

def spawn(count):
    children = []
    try:
        for _ in range(count):
            children.append(subprocess.Popen(["sleep", "5"]))
    except OSError as error:
        return f"{len(children)} then {type(error).__name__}"
    finally:
        for child in children:
            child.kill()
    return f"{len(children)} started"

def kill_parent():
    os.kill(os.getppid(), 9)
    time.sleep(30)  # the supervisor's death takes this worker with it: the call never answers

def beat(path, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with open(path, "w") as handle:
            handle.write(str(time.monotonic()))
        time.sleep(0.05)

def huge_text(lines):
    return "a\\n" * lines

def huge_name(length):
    return type("T" * length, (), {})()

def huge_error(lines):
    sys.modules["autograde_runtime.harness"].MAX_MESSAGE = 10**9  # as a student's own harness would send it
    raise ValueError("e\\n" * lines)

def leave_traces(token):
    import builtins, colorsys
    for folder in (os.getcwd(), "/tmp", "/dev/shm"):
        try:
            with open(os.path.join(folder, "trace-" + token), "w") as trace:
                trace.write(token)
        except OSError:
            pass
    os.environ["TRACE"] = colorsys.TRACE = builtins.TRACE = token
    globals()["TRACE"] = token
    subprocess.Popen(["sh", "-c", f"sleep 600; : {token}"], start_new_session=True)  # the shell waits, named
    return True

def traces(token):
    import builtins, colorsys
    found = [folder for folder in (os.getcwd(), "/tmp", "/dev/shm") if os.path.exists(f"{folder}/trace-{token}")]
    marks = {"environment": os.environ.get("TRACE"), "module": getattr(colorsys, "TRACE", None)}
    marks |= {"builtins": getattr(builtins, "TRACE", None), "global": globals().get("TRACE")}
    return found + [name for name, value in marks.items() if value]

def reach_parent():
    import ctypes, signal
    class Slice(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("size", ctypes.c_size_t)]
    parent, libc, found = os.getppid(), ctypes.CDLL(None, use_errno=True), {}
    try:
        with open(f"/proc/{parent}/mem", "rb") as memory:
            memory.read(1)
        found["mem"] = True
    except OSError:
        found["mem"] = False
    own = ctypes.create_string_buffer(b"forked", 8)  # at the same address in the parent: the child is its copy
    into = ctypes.create_string_buffer(8)
    found["vm_read"] = libc.process_vm_readv(
        parent, ctypes.byref(Slice(ctypes.addressof(into), 8)), 1, ctypes.byref(Slice(ctypes.addressof(own), 8)), 1, 0
    ) == 8
    found["ptrace"] = libc.ptrace(16, parent, None, None) == 0  # PTRACE_ATTACH
    for number in (signal.SIGSTOP, signal.SIGKILL):  # init of its PID namespace, or out of Landlock's signal scope
        try:
            os.kill(parent, number)
        except OSError:
            pass
    time.sleep(0.5)
    return found

def ipc():  # its IPC namespace, and whether it may make a shared memory segment (removed at once if it could)
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    segment = libc.shmget(0, 4096, 0o1000 | 0o600)
    if segment >= 0:
        libc.shmctl(segment, 0, None)
    return {"namespace": os.readlink("/proc/self/ns/ipc"), "shmget": segment >= 0}

def spawn_and_hang(started, token):
    code = f"import time; open({started!r}, 'w').write('started'); print('started', flush=True); time.sleep(60)"
    subprocess.Popen([sys.executable, "-c", code, token], start_new_session=True)
    while True:
        time.sleep(0.1)
"""


def make_package(folder: Path) -> Path:
    """A submission holding the probe module, inside the sandbox `folder` (as grading lays it out)."""
    package = folder / "submission" / "exercises"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "probe.py").write_text(PROBE)
    return package.parent


@pytest.fixture
def sandbox() -> Iterator[Path]:
    """A sandbox folder where grading makes one: under /tmp, where a worker's own uid can reach it."""
    with tempfile.TemporaryDirectory(prefix="autograde-test-") as folder:
        yield Path(folder)


@pytest.fixture(scope="module")
def warm() -> Iterator[str | None]:
    """One zygote for the module's `worker`s, as a grade-all run has one for its gradings (each still its own chain);
    a Worker made without it starts a zygote of its own, as `grade`'s does."""
    if not probe.found()[0].namespaces:
        yield None
        return
    with zygote.Zygote(WorkerLimits().preload) as started:
        yield started.address


@pytest.fixture
def worker(sandbox, warm):
    zygote.use(warm)
    try:
        with Worker(make_package(sandbox), sandbox, WorkerLimits(output_bytes=1000)) as started:
            yield started
    finally:
        zygote.use(None)


def test_it_runs_the_student_isolated_with_a_clean_environment(worker, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "secret")
    facts = Remote(worker).run("probe.environment").value
    assert facts["flags"] == [1, 1]
    own = {key for key in facts["env"] if not key.startswith("TORCH")}  # torch may set its own variables
    assert own == {"PATH", "HOME", "LANG", "OMP_NUM_THREADS"}
    interpreter = [Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()]  # a .venv may sit in a checkout
    checkout = [
        entry
        for entry in facts["path"]
        if Path(entry).resolve().is_relative_to(ROOT)
        and not any(Path(entry).resolve().is_relative_to(p) for p in interpreter)
    ]
    assert checkout == [], f"this repository ({ROOT}) is on the worker's path"


def test_it_keeps_the_instructors_packages_out_of_the_workers_path(worker):
    remote = Remote(worker)
    assert remote.run("probe.importable", "torch").value is True
    assert remote.run("probe.importable", "solutions").value is False
    assert remote.run("probe.importable", "autograder").value is False


def test_it_imports_the_preload_modules_before_the_first_call(sandbox):
    with Worker(make_package(sandbox), sandbox, WorkerLimits(preload=("sklearn.linear_model",))) as preloaded:
        assert Remote(preloaded).run("probe.loaded", "sklearn.linear_model").value is True


def test_it_imports_nothing_it_was_not_asked_to_preload(worker):
    assert Remote(worker).run("probe.loaded", "sklearn").value is False


def test_it_renews_a_cold_worker_with_only_the_preload_its_calls_need_but_restarts_it_warm_in_full(
    sandbox, monkeypatch
):
    monkeypatch.setenv(COLD_WORKER, "1")  # a warm parent imports the whole preload once for all its workers
    with Worker(make_package(sandbox), sandbox, WorkerLimits(preload=("colorsys",))) as renewed:
        remote = Remote(renewed)
        assert remote.run("probe.loaded", "colorsys").value is True
        remote.fresh(preload=())
        assert remote.run("probe.loaded", "colorsys").value is False
        with pytest.raises(Died):
            remote.run("probe.spawn_and_hang", os.devnull, "0", timeout=0.5)
        assert remote.run("probe.loaded", "colorsys").value is True  # a restart for a call is warm in full


def test_it_keeps_only_the_start_of_a_flood_of_output(worker):
    remote = Remote(worker)
    assert remote.run("probe.shout", 200_000).value == 200_000
    assert len(worker.output) == 1000 and worker.output_dropped > 190_000
    assert remote.transcript[-1].startswith("xxx")


def test_it_kills_a_hanging_call_and_every_process_it_started(worker):
    token = str(secrets.randbelow(10**12) + 10**12)  # in the command line of the process it starts
    started = worker.scratch / "started"  # in the worker's own disk: its output says it started
    remote = Remote(worker)
    with pytest.raises(Died, match=r"spawn_and_hang did not finish \(timeout\)"):
        remote.run("probe.spawn_and_hang", str(started), token, timeout=5.0)
    assert "started" in remote.transcript[-1], "the call never started its process"
    assert processes_with(token) == [], "a process started by the student outlived the timeout"


def test_it_stops_a_memory_bomb_at_the_ceiling(worker):
    with pytest.raises(Died, match=r"bomb ran out of memory") as death:
        Remote(worker).run("probe.bomb")
    assert death.value.kind == "out of memory"


def test_it_starts_a_fresh_worker_after_a_death(worker):
    remote = Remote(worker)
    with pytest.raises(Died):
        remote.run("probe.spawn_and_hang", os.devnull, "0", timeout=0.5)
    assert remote.run("probe.shout", 1).value == 1
    assert worker.starts == 2


def test_it_forks_a_fresh_worker_from_the_same_warm_parent_after_a_normal_end(worker):
    remote = Remote(worker)
    assert remote.run("probe.shout", 1).value == 1
    remote.fresh()
    assert remote.run("probe.shout", 2).value == 2
    assert (worker.starts, worker.chains) == (2, 1 if worker.warm else 2)


def test_its_warm_parent_comes_from_a_zygote_of_its_own_where_it_has_namespaces(sandbox):
    with Worker(make_package(sandbox), sandbox) as worker:
        assert Remote(worker).run("probe.shout", 1).value == 1
        address = worker.zygote_address
        assert (address is not None) == bool(worker.plan.namespaces), "a zygote where it should not be, or none"
        assert worker.chains == 1, worker.parent_output  # not the chain's own warm parent, after the zygote's failed
    assert address is None or not Path(address).parent.exists(), "its zygote outlived it"


def test_it_restarts_cold_after_a_worker_timed_out_and_still_answers(worker):
    remote = Remote(worker)
    with pytest.raises(Died, match=r"\(timeout\)"):
        remote.run("probe.spawn_and_hang", os.devnull, "0", timeout=0.5)
    assert remote.run("probe.shout", 3).value == 3
    assert (worker.starts, worker.chains) == (2, 2)  # every abnormal end ends the chain, warm parent and all


def test_it_does_not_blame_a_call_for_a_worker_that_died_before_it(worker):
    remote = Remote(worker)
    assert remote.run("probe.shout", 1).value == 1
    os.killpg(worker.process.pid, 9)
    worker.process.wait()
    assert remote.run("probe.shout", 2).value == 2
    assert worker.starts == 2


def test_it_reports_a_worker_killed_during_a_call_as_dead(worker):
    remote = Remote(worker)
    assert remote.run("probe.shout", 1).value == 1  # started and warm
    threading.Timer(0.5, os.killpg, (worker.process.pid, 9)).start()
    with pytest.raises(Died, match=r"beat did not finish \(crash\): the worker was killed by SIGKILL during the call"):
        remote.run("probe.beat", str(worker.scratch / "beats"), 5.0, timeout=30)


def test_it_keeps_the_grader_alive_when_the_worker_kills_its_parent(sandbox, monkeypatch):
    monkeypatch.setattr(probe, "found", lambda: (layers.Plan(), Isolation()))  # no layer: only the supervisor
    with Worker(make_package(sandbox), sandbox) as unprotected:
        remote = Remote(unprotected)
        with pytest.raises(Died, match="killed by SIGKILL"):  # the supervisor takes the blow, the worker with it
            remote.run("probe.kill_parent")
        assert remote.run("probe.shout", 1).value == 1  # and this process, the grader, is still here


# -- what comes back: bounded before the grader reads it, the reading within the call's time -----------
def test_it_cuts_a_string_answer_of_a_great_many_lines_before_the_grader_reads_it(worker):
    lines = worker.limits.response_bytes // 4  # "a\n" a line: half an answer's frame
    text = Remote(worker).run("probe.huge_text", lines).value
    assert text.count("\n") == worker.limits.text.lines
    assert text.endswith(f"... cut: {lines - worker.limits.text.lines} more lines")


def test_it_cuts_a_huge_type_name(worker):
    length = worker.limits.response_bytes // 2
    value = Remote(worker).run("probe.huge_name", length).value
    assert type(value) is Unsupported
    full = len("exercises.probe.") + length  # the type's module and name
    assert value.type_name.endswith(f"... cut: {full - worker.limits.text.chars} more characters")


def test_it_cuts_a_huge_exception_message_whatever_the_worker_sends(worker):
    lines = worker.limits.response_bytes // 4
    with pytest.raises(Raised, match=r"huge_error raised ValueError: e\n") as raised:
        Remote(worker).run("probe.huge_error", lines)
    kept = worker.limits.text.lines
    assert f"... cut: {lines - kept} more lines" in str(raised.value)
    assert str(raised.value).count("\n") <= 2 * (kept + 1)  # the message and the traceback, each bounded


def test_it_refuses_an_answer_larger_than_its_frame_unread(worker):
    lines = worker.limits.response_bytes // 2 + 1000
    with pytest.raises(Died, match=r"huge_text did not finish \(crash\): the answer was \d+ bytes, more than"):
        Remote(worker).run("probe.huge_text", lines)
    assert Remote(worker).run("probe.shout", 1).value == 1  # a fresh worker serves the next call


class Slow(Scrubber):
    """A scrubber that takes until `due()` has passed: the grader's reading of an answer running late."""

    def __init__(self, due) -> None:
        super().__init__(Fragments(frozenset(), frozenset()))
        self.due = due

    def value(self, value):
        time.sleep(max(self.due() - time.monotonic(), 0) + 0.1)
        return value


def test_it_ends_a_call_as_a_timeout_when_reading_its_answer_runs_past_the_calls_time(worker):
    remote = Remote(worker)
    remote.scrubber = Slow(lambda: worker.answer_by)
    pattern = r"shout did not finish \(timeout\): the grader's reading of its answer ran past the call's 5 s"
    with pytest.raises(Died, match=pattern) as death:
        remote.run("probe.shout", 1, timeout=5.0)
    assert death.value.kind == "timeout"
    remote.scrubber = None
    assert remote.run("probe.shout", 2).value == 2  # the worker answered: it serves the next call


def test_it_checks_the_gradings_deadline_after_each_call(worker):
    assert Remote(worker).run("probe.shout", 1).value == 1  # started and warm
    remote = Remote(worker, deadline=time.monotonic() + 5.0)
    remote.scrubber = Slow(lambda: max(worker.answer_by, remote.deadline))
    with pytest.raises(Died, match=r"the time for the whole grading ran out before its answer was read"):
        remote.run("probe.shout", 1, timeout=30.0)
    with pytest.raises(Died, match=r"The time for the whole grading ran out before this item could run"):
        remote.run("probe.shout", 1)


# -- the OS-level protections, in every tier -------------------------------------------------------
CHECKS = """
import json, os, secrets, sys
from pathlib import Path
from autograder.sandbox import Worker, WorkerLimits, zygote
from autograder.student import Remote, StudentError
sandbox, second, secret, port, marker, heartbeat = sys.argv[1:]
found = {}
run = zygote.Zygote(WorkerLimits().preload)  # the run's, as grade-all starts one: both gradings below ask it
zygote.use(run.address)
with Worker(Path(sandbox) / "submission", Path(sandbox), WorkerLimits(max_processes=40)) as worker:
    remote = Remote(worker)
    found["read"] = remote.run("probe.read", secret).value
    found["connect"] = remote.run("probe.connect", int(port)).value
    try:
        found["write"] = remote.run("probe.write", marker).value
    except StudentError as error:
        found["write"] = str(error).splitlines()[0]
    found["spawn"] = remote.run("probe.spawn", 100).value
    found["ipc"], found["grader_ipc"] = remote.run("probe.ipc").value, os.readlink("/proc/self/ns/ipc")
    found["warm"], token = worker.warm, secrets.token_hex(8)
    if worker.warm:  # a second worker forked from the same parent: nothing of the first, the parent out of its reach
        remote.run("probe.leave_traces", token)
        remote.fresh()
        found["traces"], found["token"] = remote.run("probe.traces", token).value, token
        found["parent"] = remote.run("probe.reach_parent").value
        remote.fresh()
        found["after"], found["chains"] = remote.run("probe.shout", 1).value, worker.chains
        with Worker(Path(second) / "submission", Path(second), WorkerLimits(max_processes=40)) as other:
            found["second"] = Remote(other).run("probe.traces", token).value  # another grading, the same zygote
            found["second_chains"], found["second_zygote"] = other.chains, other.zygote_address == run.address
    found["isolation"] = worker.isolation.as_dict()
    print(json.dumps(found), flush=True)
    remote.run("probe.beat", heartbeat, 120.0, timeout=180)  # until this grading process is killed
"""
LINGER = 30.0  # seconds a killed grading's worker may take to go (it takes well under one)


def tier_cases() -> list:
    """This process's own tier, then every other one (produced from root: skipped, or failed in CI, without)."""
    others = [tiers.TIERS[name] for name in tiers.TIERS if name != "root"]
    deployed = pytest.mark.deployed  # each tier's grading process runs the deployed grader's interpreter
    return [pytest.param(tier, id=tier.name.replace(" ", "-"), marks=deployed) for tier in [tiers.here(), *others]]


@pytest.fixture(scope="module")
def checked():
    """Per tier, once: what a worker could do there, and whether it outlived its killed grading process."""
    done: dict[str, dict] = {}

    def check(tier: tiers.Tier) -> dict:
        if tier != tiers.here():
            tiers.require()
        if tier.name not in done:
            with tempfile.TemporaryDirectory(prefix="autograde-test-") as folder:  # where a worker's uid reaches
                done[tier.name] = run_checks(tier, tiers.work_folder(Path(folder), tier))
        return done[tier.name]

    return check


def run_checks(tier: tiers.Tier, work: Path) -> dict:
    sandbox, second = tiers.work_folder(work / "sandbox", tier), tiers.work_folder(work / "second", tier)
    make_package(sandbox)
    make_package(second)
    marker, heartbeat = Path(f"/tmp/written-by-worker-{secrets.token_hex(8)}"), sandbox / "scratch" / "heartbeat"
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        arguments = [
            str(sandbox),
            str(second),
            str(SOLUTIONS / "padding.py"),
            str(server.getsockname()[1]),
            str(marker),
            str(heartbeat),
        ]
        grader = subprocess.Popen(
            tiers.command(tier, [str(tiers.python()), "-c", CHECKS, *arguments], work),
            env=tiers.environment(tier, work),
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            found = json.loads(grader.stdout.readline() or "{}")
            found["left_running"] = processes_with(found["token"]) if "token" in found else []  # the first worker's
            found["wrote_outside"] = marker.exists()
            deadline = time.monotonic() + 120
            while not seen(heartbeat, str(sandbox)) and grader.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
            found["beating"] = seen(heartbeat, str(sandbox))
            grader.send_signal(signal.SIGKILL)  # the grading process dies, its worker must follow
            grader.wait()
            found["lingering"] = lingering(str(sandbox))
        finally:
            grader.kill()
            grader.wait()
            marker.unlink(missing_ok=True)
    return found


def seen(path: Path, token: str) -> bool:
    """Whether `path` exists on the host or in the root of a process naming `token` (a worker's own disk)."""
    return path.exists() or any(Path(f"/proc/{pid}/root{path}").exists() for pid in processes_with(token))


def lingering(token: str) -> list[int]:
    """The processes whose command line names `token` still alive after LINGER seconds, or none sooner."""
    deadline = time.monotonic() + LINGER
    while processes_with(token) and time.monotonic() < deadline:
        time.sleep(0.1)
    return processes_with(token)


@pytest.mark.parametrize("tier", tier_cases())
def test_it_takes_the_worker_down_with_a_grading_process_that_is_killed(tier, checked):
    found = checked(tier)
    assert found["beating"], f"the worker never started beating: {found}"
    assert found["lingering"] == [], "the worker kept running after its grading process was killed"


@pytest.mark.parametrize("tier", tier_cases())
def test_it_hides_the_instructors_files_from_the_worker_where_the_tier_allows(tier, checked):
    read = checked(tier)["read"]
    hidden = read in ("FileNotFoundError", "PermissionError")
    assert hidden == tiers.expected(tier).hidden, f"the worker read {read[:60]!r} in the {tier.name} tier"
    # where it can, it reads the real file (as much of it as an answer's text brings back)
    assert hidden or read == Budget(WorkerLimits().text).text((SOLUTIONS / "padding.py").read_text())


@pytest.mark.parametrize("tier", tier_cases())
def test_it_gives_the_worker_no_network_where_the_tier_allows(tier, checked):
    connect = checked(tier)["connect"]
    assert (connect != "connected") == tiers.expected(tier).network, f"{connect} in the {tier.name} tier"


@pytest.mark.parametrize("tier", tier_cases())
def test_it_keeps_what_the_worker_writes_to_tmp_inside_the_worker_where_the_tier_allows(tier, checked):
    found = checked(tier)
    assert (not found["wrote_outside"]) == tiers.expected(tier).private_tmp, f"{found['write']} in the {tier.name} tier"


@pytest.mark.parametrize("tier", tier_cases())
def test_it_gives_the_worker_an_ipc_namespace_of_its_own_where_it_has_namespaces_and_no_shared_memory_anywhere(
    tier, checked
):
    found = checked(tier)
    own = found["ipc"]["namespace"] != found["grader_ipc"]
    assert own == bool(tiers.expected(tier).namespaces), f"{found['ipc']} in the {tier.name} tier"
    assert found["ipc"]["shmget"] is False, f"a shared memory segment was made in the {tier.name} tier"


@pytest.mark.parametrize("tier", tier_cases())
def test_it_caps_the_number_of_processes(tier, checked):
    started = checked(tier)["spawn"]
    assert started.endswith("then BlockingIOError"), started


@pytest.mark.parametrize("tier", tier_cases())
def test_it_forks_a_second_worker_that_sees_nothing_of_the_first_where_it_is_warm(tier, checked):
    found = checked(tier)
    assert found["warm"] == (tiers.expected(tier).private_tmp), f"warm or cold where it should not: {found}"
    if found["warm"]:
        assert found["traces"] == [] and found["left_running"] == [], found


@pytest.mark.parametrize("tier", tier_cases())
def test_a_second_grading_forked_from_the_runs_zygote_sees_nothing_of_the_first(tier, checked):
    found = checked(tier)
    if found["warm"]:
        assert found["second"] == [] and found["second_chains"] == 1, found
    # where the worker has namespaces, both warm parents were the zygote's (a chain of its own would be a second one)
    assert found.get("second_zygote", False) == bool(tiers.expected(tier).namespaces), found


@pytest.mark.parametrize("tier", tier_cases())
def test_it_keeps_the_warm_parent_out_of_its_workers_reach(tier, checked):
    found = checked(tier)
    if found["warm"]:
        assert found["parent"] == {"mem": False, "vm_read": False, "ptrace": False}, found["parent"]
        assert found["after"] == 1 and found["chains"] == 1, "the worker stopped or killed its warm parent"


def test_a_worker_that_does_not_warm_up_in_time_is_not_started_never_the_students_timeout(sandbox):
    cold = Worker(make_package(sandbox), sandbox, WorkerLimits(start_timeout=0.001))
    with cold, pytest.raises(Died) as died:
        Remote(cold).run("probe.environment")
    assert died.value.kind == "not started" and "the worker did not warm up" in str(died.value)
    assert "not your code" in str(died.value)

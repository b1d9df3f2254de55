"""The worker process: isolated, bounded, killed with everything it started."""

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support import SOLUTIONS

from autograder import isolation
from autograder.sandbox import Limits, Worker
from autograder.student import Died, Remote

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

def beat(path, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with open(path, "w") as handle:
            handle.write(str(time.monotonic()))
        time.sleep(0.05)

def spawn_and_hang(marker):
    subprocess.Popen([sys.executable, "-c", f"import time; time.sleep(3); open({marker!r}, 'w').write('alive')"])
    while True:
        time.sleep(0.1)
"""


isolated = pytest.mark.skipif(isolation.available() != isolation.FULL, reason="needs root and util-linux namespaces")


@pytest.fixture
def worker(tmp_path):
    package = tmp_path / "sandbox" / "submission" / "exercises"  # the submission lives inside the sandbox
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "probe.py").write_text(PROBE)
    with Worker(package.parent, tmp_path / "sandbox", Limits(output_bytes=1000)) as started:
        yield started


def test_it_runs_the_student_isolated_with_a_clean_environment(worker, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "secret")
    facts = Remote(worker).run("probe.environment").value
    assert facts["flags"] == [1, 1]
    own = {key for key in facts["env"] if not key.startswith("TORCH")}  # torch may set its own variables
    assert own == {"PATH", "HOME", "LANG", "OMP_NUM_THREADS"}
    assert not any("work/main" in entry and "site-packages" not in entry for entry in facts["path"][2:])


def test_it_keeps_the_instructors_packages_out_of_the_workers_path(worker):
    remote = Remote(worker)
    assert remote.run("probe.importable", "torch").value is True
    assert remote.run("probe.importable", "solutions").value is False
    assert remote.run("probe.importable", "autograder").value is False


def test_it_imports_the_preload_modules_before_the_first_call(tmp_path):
    package = tmp_path / "sandbox" / "submission" / "exercises"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "probe.py").write_text(PROBE)
    with Worker(package.parent, tmp_path / "sandbox", Limits(preload=("sklearn.linear_model",))) as preloaded:
        assert Remote(preloaded).run("probe.loaded", "sklearn.linear_model").value is True


def test_it_imports_nothing_it_was_not_asked_to_preload(worker):
    assert Remote(worker).run("probe.loaded", "sklearn").value is False


def test_it_keeps_only_the_start_of_a_flood_of_output(worker):
    remote = Remote(worker)
    assert remote.run("probe.shout", 200_000).value == 200_000
    assert len(worker.output) == 1000 and worker.output_dropped > 190_000
    assert remote.transcript[-1].startswith("xxx")


def test_it_kills_a_hanging_call_and_every_process_it_started(worker, tmp_path):
    marker = tmp_path / "survivor"
    with pytest.raises(Died, match=r"spawn_and_hang did not finish \(timeout\)"):
        Remote(worker).run("probe.spawn_and_hang", str(marker), timeout=1.0)
    time.sleep(3.5)
    assert not marker.exists(), "a process started by the student outlived the timeout"


def test_it_stops_a_memory_bomb_at_the_ceiling(worker):
    with pytest.raises(Died, match=r"bomb ran out of memory") as death:
        Remote(worker).run("probe.bomb")
    assert death.value.kind == "out of memory"


def test_it_starts_a_fresh_worker_after_a_death(worker):
    remote = Remote(worker)
    with pytest.raises(Died):
        remote.run("probe.spawn_and_hang", os.devnull, timeout=0.5)
    assert remote.run("probe.shout", 1).value == 1
    assert worker.starts == 2


GRADER = """
import sys
from pathlib import Path
from autograder.sandbox import Worker
from autograder.student import Remote
submission, sandbox, heartbeat = map(Path, sys.argv[1:])
with Worker(submission, sandbox) as worker:
    Remote(worker).run("probe.beat", str(heartbeat), 30.0, timeout=60)
"""


@isolated  # behind the fallback shell a killed grading's worker runs on (docs/security.md)
def test_it_takes_the_worker_down_with_a_grading_process_that_is_killed(tmp_path):
    package = tmp_path / "sandbox" / "submission" / "exercises"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "probe.py").write_text(PROBE)
    heartbeat = tmp_path / "sandbox" / "scratch" / "heartbeat"  # the worker may write in its scratch folder
    arguments = [str(package.parent), str(tmp_path / "sandbox"), str(heartbeat)]
    grader = subprocess.Popen([sys.executable, "-c", GRADER, *arguments])
    deadline = time.monotonic() + 60
    while not heartbeat.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert heartbeat.exists(), "the worker never started beating"
    grader.kill()
    grader.wait()
    time.sleep(1.0)
    last = heartbeat.read_text()
    time.sleep(1.0)
    assert heartbeat.read_text() == last, "the worker kept running after its grading process was killed"


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


@isolated
def test_it_hides_the_instructors_files_from_the_worker(worker):
    remote = Remote(worker)
    assert remote.run("probe.read", str(SOLUTIONS / "padding.py")).value in ("FileNotFoundError", "PermissionError")
    assert remote.run("probe.read", str(SOLUTIONS.parent / "autograder" / "rubric.toml")).value != ""


@isolated
def test_it_gives_the_worker_no_network(worker):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        assert Remote(worker).run("probe.connect", server.getsockname()[1]).value == "ConnectionRefusedError"


@isolated
def test_it_keeps_what_the_worker_writes_to_tmp_inside_the_worker(worker):
    marker = Path("/tmp") / f"written-by-worker-{os.getpid()}"
    try:
        assert Remote(worker).run("probe.write", str(marker)).value is True
        assert not marker.exists()
    finally:
        marker.unlink(missing_ok=True)


@isolated
def test_it_caps_the_number_of_processes(tmp_path, worker):
    worker.close()
    capped = Worker(worker.submission, worker.sandbox, Limits(max_processes=40))
    try:
        started = Remote(capped).run("probe.spawn", 100).value
    finally:
        capped.close()
    assert started.endswith("then BlockingIOError"), started


def test_it_keeps_the_grader_alive_when_the_worker_kills_its_parent(worker, monkeypatch):
    monkeypatch.setattr(isolation, "available", lambda: isolation.Isolation())
    worker.close()
    remote = Remote(worker)
    with contextlib.suppress(Died):  # without namespaces the shell in between takes the blow
        remote.run("probe.kill_parent")
    assert remote.run("probe.shout", 1).value == 1  # and this process, the grader, is still here

"""The worker process: isolated, bounded, killed with everything it started."""

import os
import time

import pytest

from autograder.sandbox import Limits, Worker, WorkerDied
from autograder.student import Died, Remote

PROBE = """
import os, subprocess, sys, time

def environment():
    return {"path": list(sys.path), "env": dict(os.environ), "flags": [sys.flags.isolated, sys.flags.no_site]}

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

def spawn_and_hang(marker):
    subprocess.Popen([sys.executable, "-c", f"import time; time.sleep(3); open({marker!r}, 'w').write('alive')"])
    while True:
        time.sleep(0.1)
"""


@pytest.fixture
def worker(tmp_path):
    package = tmp_path / "submission" / "exercises"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "probe.py").write_text(PROBE)
    with Worker(tmp_path / "submission", tmp_path, Limits(output_bytes=1000)) as started:
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


def test_it_reports_a_worker_that_never_answers_as_dead(tmp_path):
    worker = Worker(tmp_path / "nothing", tmp_path, Limits(start_timeout=30))
    worker._start()
    os.killpg(worker.process.pid, 9)
    with pytest.raises(WorkerDied, match="killed by SIGKILL"):
        worker.request({"target": "x.y"}, timeout=5)
    worker.close()

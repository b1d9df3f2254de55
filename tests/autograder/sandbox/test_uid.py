"""The uid layer: a uid no other worker holds, and no process of it left once it is released."""

import os
import subprocess
import sys
import time

import pytest
from attack_suite import processes_with

from autograder.sandbox import uid

root_grader = pytest.mark.skipif(not uid.possible(), reason="a uid of the worker's own needs a root grader")

# every search starts at the same uid, as two gradings may by chance: only the locks keep them apart
LEASE = "import random; random.randrange = lambda n: 0\nfrom autograder.sandbox import uid; print(uid.Lease().uid)"


@root_grader
def test_it_never_gives_a_uid_that_another_grading_holds(monkeypatch):
    monkeypatch.setattr(uid.random, "randrange", lambda count: 0)
    held = [uid.Lease() for _ in range(3)]
    try:
        others = {
            int(subprocess.run([sys.executable, "-c", LEASE], capture_output=True, text=True).stdout) for _ in range(3)
        }
        mine = {lease.uid for lease in held}
        assert len(mine) == 3 and not mine & others
        assert all(uid.FIRST <= number < uid.FIRST + uid.COUNT for number in mine | others)
    finally:
        for lease in held:
            lease.release()


@root_grader
def test_its_release_kills_every_process_of_the_uid_even_one_in_a_session_of_its_own():
    lease = uid.Lease()
    mark = f"61.{lease.uid}{os.getpid()}"
    subprocess.run([*uid.command(lease.uid), "setsid", "--fork", "sleep", mark], check=True, timeout=30)
    deadline = time.monotonic() + 30  # setsid returns before its child has run sleep
    while not processes_with(mark) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert processes_with(mark), "the process did not start"
    lease.release()
    assert processes_with(mark) == []


@root_grader
def test_it_hands_the_sandbox_over_to_the_uid(tmp_path):
    (tmp_path / "scratch").mkdir()
    (tmp_path / "scratch" / "file").write_text("x")
    uid.hand_over(tmp_path, 61999)
    assert {path.stat().st_uid for path in [tmp_path, *tmp_path.rglob("*")]} == {61999}


@root_grader
def test_it_counts_the_processes_a_uid_runs():
    lonely = 60980  # below the tiers' users (60990-60999) and the workers' (61000-64999): no process runs as it
    sleepers = [subprocess.Popen([*uid.command(lonely), "sleep", "30"]) for _ in range(3)]
    try:
        deadline = time.monotonic() + 30  # until each has become that user
        while uid.tasks(lonely) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert uid.tasks(lonely) == 3
    finally:
        for sleeper in sleepers:
            sleeper.kill()
            sleeper.wait()

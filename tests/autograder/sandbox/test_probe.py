"""The probe: each layer tried, what holds measured from inside, a layer that fails named with its step."""

import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import ROOT

from autograder.sandbox import landlock, layers, namespaces, paths, probe, seccomp, uid
from autograder.sandbox.record import Failure
from autograder.sandbox.state import State


@pytest.fixture(autouse=True)
def probed_afresh() -> Iterator[None]:
    probe.found.cache_clear()
    yield
    probe.found.cache_clear()


@pytest.mark.skipif(not uid.has_capability(21), reason="namespaces as root need CAP_SYS_ADMIN")
def test_it_names_the_step_where_a_layer_failed_and_goes_on_without_it(monkeypatch):
    monkeypatch.setattr(namespaces, "UNSHARE", [*namespaces.UNSHARE, "--no-such-option"])
    isolation = probe.available()
    failed = [failure for failure in isolation.failures if "unrecognized option '--no-such-option'" in failure.step]
    assert [failure.layer for failure in failed] == [namespaces.ROOT, namespaces.USER], isolation.failures
    assert isolation.layers["namespaces"].state is State.FAILED
    assert isolation.layers["namespaces"].detail.startswith("unshare: ")  # the tool that said so, first
    assert not isolation.own_pid_namespace
    assert isolation.hidden_instructor_files == (landlock.abi() >= 1)  # the layers that started still hold


@pytest.fixture
def landlock_alone(monkeypatch) -> None:
    """The probe tries Landlock and seccomp only (no namespaces, no uid of the worker's own)."""
    monkeypatch.setattr(probe, "namespace_kinds", lambda: ([], "left out by the test"))
    monkeypatch.setattr(uid, "possible", lambda: False)


@pytest.mark.skipif(landlock.abi() < 1, reason="this kernel has no Landlock")
def test_it_refuses_a_grant_that_would_open_a_hidden_path_before_applying_it(monkeypatch, landlock_alone):
    granted, listed = layers.readable()
    monkeypatch.setattr(layers, "readable", lambda: ([*granted, ROOT], listed))  # a grant too many
    isolation = probe.available()
    assert isolation.layers["landlock"].state is State.FAILED
    assert f"{ROOT} would open {ROOT}" in isolation.layers["landlock"].detail
    assert not isolation.hidden_instructor_files and isolation.mechanisms["hidden_instructor_files"] == []
    assert "Landlock (ABI" in isolation.refusal() and "did not start here" in isolation.refusal()
    assert "use a kernel" not in isolation.refusal()  # this kernel has the ABI


@pytest.mark.skipif(landlock.abi() < 1, reason="this kernel has no Landlock")
def test_it_measures_what_holds_rather_than_trusting_the_layers(monkeypatch, landlock_alone):
    granted, listed = layers.readable()
    monkeypatch.setattr(layers, "readable", lambda: ([*granted, ROOT], listed))  # a grant too many
    monkeypatch.setattr(paths, "unsafe", lambda granted, hidden: [])  # ... that the check before applying misses
    isolation = probe.available()
    assert not isolation.hidden_instructor_files
    assert isolation.mechanisms["hidden_instructor_files"] == []
    assert Failure("landlock", "in force, but the probe broke through: hidden_instructor_files") in isolation.failures
    read = [exposure for exposure in isolation.exposed if Path(exposure.path).is_relative_to(ROOT)]
    assert read and all(exposure.grant == f"Landlock grant {ROOT}" for exposure in read), isolation.exposed
    refusal = isolation.refusal()
    assert f"the probe read {read[0].path} (Landlock grant {ROOT})" in refusal, refusal
    assert "a grant let the probe through" in refusal and "use a kernel" not in refusal


@pytest.mark.skipif(not uid.possible(), reason="a uid of the worker's own needs root")
def test_it_drops_the_uid_when_the_workers_user_cannot_read_the_interpreters_libraries(monkeypatch, tmp_path):
    private = tmp_path / "home"  # as Python installed under /root (mode 700)
    private.mkdir(mode=0o700)
    library = private / "numpy" / "__init__.py"
    library.parent.mkdir()
    library.write_text("")
    monkeypatch.setattr(probe, "namespace_kinds", lambda: ([], "left out by the test"))
    monkeypatch.setattr(paths, "libraries", lambda: [str(library)])
    isolation = probe.available()
    assert not isolation.separate_user
    # (an interpreter in a private home itself is caught first: the user then runs another Python)
    assert isolation.layers["uid"].state is State.FAILED
    assert isolation.layers["uid"].detail.endswith(probe.INTERPRETER_HINT), isolation.layers["uid"]
    assert "uid" in [failure.layer for failure in isolation.failures]


def test_it_says_why_the_workers_user_cannot_run_the_student_code_on_this_interpreter():
    assert probe.interpreter_problem({"python": sys.version, "unreadable_libraries": []}) is None
    other = probe.interpreter_problem({"python": "3.11.2 (main, Apr 28 2025)", "unreadable_libraries": []})
    assert other.tool == "worker" and other.said.startswith("the worker's user runs another Python (3.11.2)")
    assert sys.executable in other.said


def test_it_probes_from_a_temporary_folder_too_deep_for_a_unix_sockets_address(monkeypatch, tmp_path, landlock_alone):
    deep = tmp_path / ("d" * 60) / ("e" * 60)  # a grading's private TMPDIR, deep under a test's folder
    deep.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    isolation = probe.available()  # the socket's address would not fit under it: the probe says what held anyway
    assert isolation.no_network == seccomp.supported(), isolation
    assert not [failure for failure in isolation.failures if failure.layer == "worker"], isolation.failures


@pytest.mark.skipif(not seccomp.supported(), reason="no filter written for this architecture")
def test_it_finds_another_process_out_of_reach_by_trying_it_where_the_worker_shares_the_graders_uid(landlock_alone):
    isolation = probe.available()  # the worker runs as this process's user, without capabilities
    assert isolation.others_out_of_reach and isolation.mechanisms["others_out_of_reach"] == ["seccomp"], isolation
    assert isolation.no_process_outlives == (landlock.abi() >= 6), isolation  # the one it leaves is ended


def test_it_finds_another_process_within_reach_without_the_filter(monkeypatch, landlock_alone):
    monkeypatch.setattr(seccomp, "supported", lambda: False)  # as on an architecture without a filter
    isolation = probe.available()
    assert not isolation.others_out_of_reach and isolation.mechanisms["others_out_of_reach"] == [], isolation
    assert "others_out_of_reach" in isolation.missing()


def started(pid: int, mark: str) -> None:
    """Wait until `pid` has exec'd its command (until then its command line is this process's)."""
    while mark.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes():
        time.sleep(0.01)


def test_it_finds_the_processes_left_behind_by_their_existence_and_ends_them(tmp_path):
    mark = str(tmp_path / "sandbox")
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", mark]) as left:
        started(left.pid, mark)
        assert probe.left_behind(mark) == [left.pid]
        assert left.wait(timeout=30) == -9  # SIGKILL
    assert probe.left_behind(mark) == []


def test_it_records_a_process_left_behind_where_the_supervisor_does_not_end_it(monkeypatch, tmp_path, landlock_alone):
    careless = tmp_path / "careless_supervisor.py"  # runs the worker and ends nothing
    careless.write_text(
        "import os, sys\ncommand = sys.argv[sys.argv.index('--') + 1 :]\nos.execv(command[0], command)\n"
    )
    monkeypatch.setattr(layers, "SUPERVISOR", careless)
    isolation = probe.available()
    assert not isolation.no_process_outlives and "no_process_outlives" in isolation.missing(), isolation

"""The probe: each layer tried, what holds measured from inside, a layer that fails named with its step."""

import sys
from collections.abc import Iterator

import pytest
from support import ROOT

from autograder.sandbox import landlock, layers, namespaces, paths, probe, uid


@pytest.fixture(autouse=True)
def probed_afresh() -> Iterator[None]:
    probe.found.cache_clear()
    yield
    probe.found.cache_clear()


@pytest.mark.skipif(not uid.has_capability(21), reason="namespaces as root need CAP_SYS_ADMIN")
def test_it_names_the_step_where_a_layer_failed_and_goes_on_without_it(monkeypatch):
    monkeypatch.setattr(namespaces, "UNSHARE", [*namespaces.UNSHARE, "--no-such-option"])
    isolation = probe.available()
    failed = [failure for failure in isolation.failures if "unrecognized option '--no-such-option'" in failure]
    assert [failure.split(":")[0] for failure in failed] == [namespaces.ROOT, namespaces.USER], isolation.failures
    assert isolation.layers["namespaces"].startswith("failed: unshare:")
    assert not isolation.own_pid_namespace
    assert isolation.hidden_instructor_files == (landlock.abi() >= 1)  # the layers that started still hold


@pytest.mark.skipif(landlock.abi() < 1, reason="this kernel has no Landlock")
def test_it_measures_what_holds_rather_than_trusting_the_layers(monkeypatch):
    monkeypatch.setattr(probe, "namespace_kinds", lambda: ([], "off: left out by the test"))
    monkeypatch.setattr(uid, "possible", lambda: False)
    granted, listed = layers.readable()
    monkeypatch.setattr(layers, "readable", lambda: ([*granted, ROOT], listed))  # a grant too many
    isolation = probe.available()
    assert not isolation.hidden_instructor_files
    assert isolation.mechanisms["hidden_instructor_files"] == []
    assert any(failure.startswith("landlock: in force, but") for failure in isolation.failures), isolation.failures


@pytest.mark.skipif(not uid.possible(), reason="a uid of the worker's own needs root")
def test_it_drops_the_uid_when_the_workers_user_cannot_read_the_interpreters_libraries(monkeypatch, tmp_path):
    private = tmp_path / "home"  # as Python installed under /root (mode 700)
    private.mkdir(mode=0o700)
    library = private / "numpy" / "__init__.py"
    library.parent.mkdir()
    library.write_text("")
    monkeypatch.setattr(probe, "namespace_kinds", lambda: ([], "off: left out by the test"))
    monkeypatch.setattr(paths, "libraries", lambda: [str(library)])
    isolation = probe.available()
    assert not isolation.separate_user
    # (an interpreter in a private home itself is caught first: the user then runs another Python)
    assert isolation.layers["uid"].startswith("failed: worker: its user "), isolation.layers
    assert any(failure.startswith("uid: worker: its user ") for failure in isolation.failures)


def test_it_says_why_the_workers_user_cannot_run_the_student_code_on_this_interpreter():
    assert probe.interpreter_problem({"python": sys.version, "unreadable_libraries": []}) == ""
    other = probe.interpreter_problem({"python": "3.11.2 (main, Apr 28 2025)", "unreadable_libraries": []})
    assert other.startswith("worker: its user runs another Python (3.11.2)")
    assert sys.executable in other

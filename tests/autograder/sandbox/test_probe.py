"""The probe: each layer tried, what holds measured from inside, a layer that fails named with its step."""

from collections.abc import Iterator

import pytest
from support import ROOT

from autograder.sandbox import landlock, layers, namespaces, probe, uid


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

"""The isolation record: what results.json says, typed, and why a grading that counts refuses."""

import json

from autograder.sandbox.record import REQUIRED, Exposure, Failure, Isolation, from_dict
from autograder.sandbox.state import Layer, State

FULL = Isolation(
    separate_user=True,
    no_network=True,
    hidden_instructor_files=True,
    private_tmp=True,
    own_pid_namespace=True,
    no_process_outlives=True,
    others_out_of_reach=True,
    mechanisms={"separate_user": ["uid"], "no_network": ["namespaces", "seccomp"]},
    layers={
        "namespaces": Layer.on("root namespaces"),
        "uid": Layer.on("uid 61000-64999"),
        "landlock": Layer.on("landlock abi 7", abi=7),
        "seccomp": Layer.on("seccomp"),
    },
)
USER_NAMESPACE_REFUSED = Failure("user namespace", "unshare: unshare failed: Operation not permitted", "seccomp?")


def test_it_refuses_only_for_a_missing_required_protection_and_says_how_to_get_it():
    assert FULL.refusal() == ""
    unprotected = Isolation(no_network=True, others_out_of_reach=True, failures=[USER_NAMESPACE_REFUSED])
    assert unprotected.missing() == ["hidden_instructor_files", "no_process_outlives"]
    reason = unprotected.refusal()
    assert REQUIRED["hidden_instructor_files"] in reason and REQUIRED["no_process_outlives"] in reason
    assert REQUIRED["no_network"] not in reason
    assert str(USER_NAMESPACE_REFUSED) in reason and "sudo" in reason
    assert "a kernel with Landlock ABI 6 or later (Linux 6.12+)" in reason  # no Landlock recorded: none here


def test_a_refusal_names_what_the_probe_read_and_the_grant_that_let_it_not_a_kernel_it_has():
    exposure = Exposure("/venv/lib/python3.11/site-packages/solutions/padding.py", "Landlock grant /venv/lib64")
    broken = Isolation(
        no_network=True,
        no_process_outlives=True,
        others_out_of_reach=True,
        layers={"landlock": Layer.on("landlock abi 7", abi=7)},
        failures=[Failure("landlock", "in force, but the probe broke through: hidden_instructor_files")],
        exposed=[exposure],
    )
    reason = broken.refusal()
    assert f"the probe read {exposure.path} (Landlock grant /venv/lib64)" in reason
    assert "a grant let the probe through" in reason and "Landlock (ABI 7) is in force" in reason
    assert "use a kernel" not in reason


def test_it_says_landlock_did_not_start_where_the_kernel_has_it_and_asks_for_a_kernel_only_where_it_lacks_it():
    failed = Isolation(no_network=True, layers={"landlock": Layer.failed("the grader refused its own grants", abi=7)})
    assert "Landlock (ABI 7) did not start here (failed: the grader refused its own grants)" in failed.refusal()
    assert "use a kernel" not in failed.refusal()
    old = Isolation(
        no_network=True,
        hidden_instructor_files=True,
        others_out_of_reach=True,
        layers={"landlock": Layer.on("landlock abi 4", 4)},
    )
    assert old.missing() == ["no_process_outlives"]
    assert "a kernel with Landlock ABI 6 or later (Linux 6.12+)" in old.refusal()
    none = Isolation(
        no_network=True,
        no_process_outlives=True,
        others_out_of_reach=True,
        layers={"landlock": Layer.off("no Landlock")},
    )
    assert "a kernel with Landlock ABI 1 or later (Linux 5.13+)" in none.refusal()


def test_it_refuses_where_another_process_is_within_reach_and_names_the_filter():
    reachable = Isolation(**{**vars(FULL), "others_out_of_reach": False, "layers": {"seccomp": Layer.off("aarch32")}})
    assert reachable.missing() == ["others_out_of_reach"]
    assert REQUIRED["others_out_of_reach"] in reachable.refusal()
    assert "The seccomp filter is not in force here (off: aarch32)" in reachable.refusal()
    assert from_dict(json.loads(json.dumps(reachable.as_dict()))).others_out_of_reach is False


def test_it_writes_typed_data_that_reads_back_the_same_with_a_summary_for_people():
    record = Isolation(**{**vars(FULL), "failures": [USER_NAMESPACE_REFUSED], "exposed": [Exposure("/x", "y")]})
    written = json.loads(json.dumps(record.as_dict()))
    assert written["layers"]["landlock"] == {"state": "on", "detail": "landlock abi 7", "abi": 7}
    assert written["failures"] == [{"layer": "user namespace", "step": USER_NAMESPACE_REFUSED.step, "hint": "seccomp?"}]
    assert written["summary"] == f"root namespaces, uid 61000-64999, seccomp; {USER_NAMESPACE_REFUSED}"
    assert from_dict(written) == record


def test_a_layer_state_that_is_not_data_reads_as_a_layer_that_failed():
    assert Layer.from_dict({"state": "on", "detail": "seccomp"}) == Layer.on("seccomp")
    for malformed in (None, "abi 7", {"state": "sure"}, {"detail": "on"}):
        assert Layer.from_dict(malformed).state is State.FAILED

"""The isolation record: what results.json says, and why a grading that counts refuses."""

from autograder.sandbox.record import REQUIRED, Isolation

FULL = Isolation(
    separate_user=True,
    no_network=True,
    hidden_instructor_files=True,
    private_tmp=True,
    own_pid_namespace=True,
    no_process_outlives=True,
    mechanisms={"separate_user": ["uid 61000-64999"], "no_network": ["root namespaces", "seccomp"]},
)


def test_it_refuses_only_for_a_missing_required_protection_and_says_how_to_get_it():
    assert FULL.refusal() == ""
    unprotected = Isolation(no_network=True, failures=["user namespace: unshare failed"])
    assert unprotected.missing() == ["hidden_instructor_files", "no_process_outlives"]
    reason = unprotected.refusal()
    assert REQUIRED["hidden_instructor_files"] in reason and REQUIRED["no_process_outlives"] in reason
    assert REQUIRED["no_network"] not in reason
    assert "user namespace: unshare failed" in reason and "sudo" in reason and "Landlock" in reason


def test_it_keeps_todays_booleans_and_adds_the_mechanisms():
    record = FULL.as_dict()
    assert {"separate_user", "no_network", "hidden_instructor_files", "private_tmp", "own_pid_namespace"} <= set(record)
    assert record["mechanisms"]["no_network"] == ["root namespaces", "seccomp"]

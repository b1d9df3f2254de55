"""`autograde todo check`, the public tests: an exercise's are those under its TODO's header; one missing, one
failing on the reference, one passing on the stub, and a mistake none names are each named."""

import shutil

import pytest

from autograder import todos
from autograder.locations import PUBLIC_TESTS
from autograder.todos.completeness import Finding, Outcome, Paths, Status, public

LSTM = todos.record("lstm_step")


def missing(findings: list[Finding]) -> list[str]:
    return [finding.words for finding in findings if finding.status == Status.MISSING]


def test_an_exercise_without_public_tests_is_missing_saying_where_to_add_them():
    assert missing(public.public_findings(LSTM, {}, [], [])) == [
        "no public test calls lstm_step: add one to exercises/tests/test_recurrence.py, under its TODO's header "
        "('# ---- TODO · lstm_step', dashes to the line's width)"
    ]


def test_the_public_tests_of_an_exercise_are_those_under_its_todos_header():
    tests = public.public_callers([LSTM])["lstm_step"]
    assert tests and all(test.startswith("test_recurrence::") for test in tests)
    assert not set(tests) & set(public.public_callers([todos.record("rnn_forward")])["rnn_forward"])


@pytest.mark.release  # runs the public tests, twice: about ten seconds
def test_a_public_test_that_passes_on_the_stub_is_missing_naming_it(tmp_path):
    tests = tmp_path / "tests"
    shutil.copytree(PUBLIC_TESTS, tests, ignore=shutil.ignore_patterns("__pycache__", "*.json"))
    module = tests / "test_recurrence.py"
    header = "# ---------------------------------------------------------------- TODO · lstm_step\n"
    assert header in module.read_text()  # the test goes first in lstm_step's section, whichever sections follow it
    module.write_text(
        module.read_text().replace(header, f"{header}\n\ndef test_it_asserts_nothing():\n    assert True\n")
    )
    ran = public.run_public_tests([LSTM], Paths(public_tests=tests))
    assert missing(public.public_findings(LSTM, *ran)) == [
        "public test test_recurrence::test_it_asserts_nothing passes on the stub: it shows nothing of lstm_step "
        "(make it call it and check what it gives)"
    ]


def test_a_public_test_that_fails_on_the_reference_is_missing_with_its_message():
    test = "test_recurrence::test_lstm_step_shapes"
    said = missing(public.public_findings(LSTM, {"lstm_step": [test]}, [Outcome(test, False, "boom")], []))
    assert said == [f"public test {test} fails on the reference: boom (fix the test, or solutions/recurrence.py)"]


def test_each_mistake_no_public_test_fails_with_is_missing_saying_where_to_add_a_test():
    said = missing(public.named_findings(LSTM, {}))
    assert [words.split(":")[0] for words in said] == [
        f"no public test fails with {m}" for m in ("L1", "L2", "L3", "L4")
    ]
    assert "add one to exercises/tests/test_recurrence.py, under lstm_step's header" in said[0]


def test_a_mistake_named_by_a_failing_public_test_is_no_longer_missing():
    call = {"inputs": [[[2], 0.5, 1.0]], "returned": {"shape": [2], "values": [1.0, 2.0]}}
    wrong = {**call, "returned": {"shape": [2], "values": [1.0, 3.0]}}
    record = {
        "function": LSTM.target,
        "in_place": False,
        "reference": {"failed": False, "calls": [call]},
        "variants": {"L4": {"failed": True, "calls": [wrong]}},
    }
    said = missing(public.named_findings(LSTM, {"test_recurrence::test_the_state_is_h_then_c": record}))
    assert [words.split(":")[0] for words in said] == [f"no public test fails with {m}" for m in ("L1", "L2", "L3")]

"""`autograde todo check`, the project's tests against PyTorch: those that call the function are found through
their file's helpers and fixtures, run from the checkout, and a failing one is named with its message."""

import pytest

from autograder import todos
from autograder.locations import REFERENCE_TESTS
from autograder.todos.completeness import Finding, Outcome, Status, pytorch

LSTM = todos.record("lstm_step")


def missing(findings: list[Finding]) -> list[str]:
    return [finding.words for finding in findings if finding.status == Status.MISSING]


def test_the_projects_tests_that_call_a_function_are_found_through_the_helpers_and_fixtures_of_their_file(tmp_path):
    (tmp_path / "test_recurrence.py").write_text(
        "import pytest\nfrom solutions import recurrence\n"
        "def both(): return recurrence.lstm_step(1, 2)\n"
        "@pytest.fixture\ndef stepped(): return both()\n"
        "def test_directly(): recurrence.lstm_step()\n"
        "def test_through_a_helper(): both()\n"
        "def test_through_a_fixture(stepped): pass\n"
        "def test_another_function(): recurrence.rnn_forward()\n"
    )
    assert pytorch.reference_callers(LSTM, tmp_path) == [
        "test_recurrence::test_directly",
        "test_recurrence::test_through_a_helper",
        "test_recurrence::test_through_a_fixture",
    ]


def test_the_projects_comparison_of_rnn_forward_with_nn_rnn_is_among_its_callers():
    callers = pytorch.reference_callers(todos.record("rnn_forward"), REFERENCE_TESTS)
    assert "test_recurrence::test_rnn_forward_matches_nn_rnn_outputs_and_final_state" in callers
    assert not any("lstm_step" in test for test in callers)


@pytest.mark.slow  # a pytest run of the checkout's tests/solutions: a few seconds
def test_the_projects_tests_that_call_lstm_step_run_from_the_checkout_and_pass():
    callers, ran = pytorch.run_reference_tests([LSTM])
    assert callers["lstm_step"] and {case.function for case in ran} == set(callers["lstm_step"])
    assert pytorch.pytorch_findings(LSTM, callers, ran)[0].status == Status.OK


def test_no_test_comparing_it_with_pytorch_is_a_note_not_something_missing():
    found = pytorch.pytorch_findings(LSTM, {}, [])
    assert [(f.status, f.words) for f in found] == [
        (Status.NOTE, "no test compares it with PyTorch: none in tests/solutions/")
    ]


def test_a_failing_comparison_with_pytorch_is_missing_naming_the_case_and_its_message():
    test = "test_recurrence::test_lstm_step_matches_nn_lstmcell"
    ran = [Outcome(f"{test}[2-3]", True), Outcome(f"{test}[1-1]", False, "AssertionError: h differs")]
    assert missing(pytorch.pytorch_findings(LSTM, {"lstm_step": [test]}, ran)) == [
        f"{test}[1-1] fails: AssertionError: h differs"
    ]

"""Hidden suite for rnn_forward: one test per rubric item, each calling its check."""

from autograder.checks import recurrence as checks


def test_output(student):
    checks.check_rnn_forward_output(student)


def test_final_state(student):
    checks.check_rnn_forward_final_state(student)


def test_initial_state(student):
    checks.check_rnn_forward_initial_state(student)


def test_gradients(student):
    checks.check_rnn_forward_gradients(student)


def test_writes_the_loop(student):
    checks.check_rnn_forward_writes_the_loop(student)


def test_legal_inputs(student):
    checks.check_rnn_forward_legal_inputs(student)

"""Hidden suite for lstm_step: one test per rubric item, each calling its check."""

from autograder.checks import recurrence as checks


def test_values(student):
    checks.check_lstm_step_values(student)


def test_gradients(student):
    checks.check_lstm_step_gradients(student)


def test_writes_the_step(student):
    checks.check_lstm_step_writes_the_step(student)


def test_legal_inputs(student):
    checks.check_lstm_step_legal_inputs(student)

"""Hidden suite for train_step: one test per rubric item, each calling its check."""

from autograder.checks import classifier as checks


def test_update(student):
    checks.check_train_step_update(student)


def test_clipped_norm(student):
    checks.check_train_step_clipped_norm(student)


def test_legal_inputs(student):
    checks.check_train_step_legal_inputs(student)

"""Hidden suite for masked_mean: one test per rubric item, each calling its check."""

from autograder.checks import padding as checks


def test_values(student):
    checks.check_masked_mean_values(student)


def test_legal_inputs(student):
    checks.check_masked_mean_legal_inputs(student)

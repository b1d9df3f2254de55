"""Hidden suite for sample: one test per rubric item, each calling its check."""

from autograder.checks import language_model as checks


def test_values(student):
    checks.check_sample_values(student)


def test_no_grad(student):
    checks.check_sample_no_grad(student)


def test_legal_inputs(student):
    checks.check_sample_legal_inputs(student)

"""Hidden suite for gather_final: one test per rubric item, each calling its check."""

from autograder.checks import padding as checks


def test_values(student):
    checks.check_gather_final_values(student)


def test_legal_inputs(student):
    checks.check_gather_final_legal_inputs(student)

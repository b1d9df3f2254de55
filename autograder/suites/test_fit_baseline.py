"""Hidden suite for fit_baseline: one test per rubric item, each calling its check."""

from autograder.checks import baseline as checks


def test_accuracy(student, rubric):
    checks.check_fit_baseline_accuracy(student, rubric)

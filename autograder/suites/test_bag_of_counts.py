"""Hidden suite for bag_of_counts: one test per rubric item, each calling its check."""

from autograder.checks import baseline as checks


def test_values(student):
    checks.check_bag_of_counts_values(student)

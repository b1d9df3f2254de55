"""Hidden suite for SequenceClassifier: one test per rubric item, each calling its check."""

from autograder.checks import classifier as checks


def test_last_pooling(student):
    checks.check_SequenceClassifier_last_pooling(student)


def test_mean_max_pooling(student):
    checks.check_SequenceClassifier_mean_max_pooling(student)


def test_padded_batch(student):
    checks.check_SequenceClassifier_padded_batch(student)

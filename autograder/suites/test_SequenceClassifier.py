"""Hidden suite for SequenceClassifier: one test per rubric item, each calling its check."""

from autograder.checks import classifier as checks
from autograder.checks import thresholds


def test_last_pooling(student):
    checks.check_SequenceClassifier_last_pooling(student)


def test_mean_max_pooling(student):
    checks.check_SequenceClassifier_mean_max_pooling(student)


def test_padded_batch(student):
    checks.check_SequenceClassifier_padded_batch(student)


def test_legal_inputs(student):
    checks.check_SequenceClassifier_legal_inputs(student)


def test_learns_the_task(student, rubric):
    thresholds.check_SequenceClassifier_learns_the_task(student, rubric)


def test_learns_padded_rows(student, rubric):
    thresholds.check_SequenceClassifier_learns_padded_rows(student, rubric)

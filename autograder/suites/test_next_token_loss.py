"""Hidden suite for next_token_loss: one test per rubric item, each calling its check."""

from autograder.checks import language_model as checks
from autograder.checks import thresholds


def test_values(student):
    checks.check_next_token_loss_values(student)


def test_padding(student):
    checks.check_next_token_loss_padding(student)


def test_gradients(student):
    checks.check_next_token_loss_gradients(student)


def test_trains_the_pattern_model(student, rubric):
    thresholds.check_next_token_loss_trains_the_pattern_model(student, rubric)


def test_legal_inputs(student):
    checks.check_next_token_loss_legal_inputs(student)

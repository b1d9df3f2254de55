"""Hidden suite for set_forget_bias: one test per rubric item, each calling its check."""

from autograder.checks import initialisation as checks


def test_forget_block(student):
    checks.check_set_forget_bias_forget_block(student)


def test_all_layers_and_directions(student):
    checks.check_set_forget_bias_all_layers_and_directions(student)


def test_in_place(student):
    checks.check_set_forget_bias_in_place(student)


def test_legal_inputs(student):
    checks.check_set_forget_bias_legal_inputs(student)

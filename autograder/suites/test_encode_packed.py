"""Hidden suite for encode_packed: one test per rubric item, each calling its check."""

from autograder.checks import padding as checks


def test_final_state(student):
    checks.check_encode_packed_final_state(student)


def test_output(student):
    checks.check_encode_packed_output(student)


def test_skips_padding(student):
    checks.check_encode_packed_skips_padding(student)


def test_legal_inputs(student):
    checks.check_encode_packed_legal_inputs(student)

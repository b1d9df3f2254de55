"""gather_final's checks, run in process on rewrites of the reference: what they catch, what they accept."""

import re

import pytest
import torch
from in_process import feedback, student

from autograder.checks import variants
from autograder.student import Raised
from autograder.todos.gather_final import checks
from solutions import padding as reference_padding


def test_it_explains_validation_that_refuses_a_legal_input_naming_no_mistake():
    def gather_checked(output, lengths):
        if output.dtype != torch.float32:
            raise TypeError(f"output must be float32, got {output.dtype}")
        return reference_padding.gather_final(output, lengths)

    submission = student(padding__gather_final=gather_checked)
    checks.check_gather_final_values(submission)
    with pytest.raises(Raised) as raised:  # the student's own error, explained: the item fails as "raised"
        checks.check_gather_final_legal_inputs(submission)
    text = str(raised.value)
    assert text.startswith("gather_final raised TypeError: output must be float32, got torch.float64"), text
    assert "That input is legal (float64, output (4, 6, 5) float64, lengths [4, 6, 2, 5])" in text, text
    assert not re.search(r"\[[A-Z]\d\]", text), text


def test_it_leaves_a_known_mistake_to_the_items_that_charge_it_and_charges_the_rest_on_legal_inputs():
    def gather_from_step_one(output, lengths):  # right on every row of two steps or more: G2's on rows of one
        return output[torch.arange(len(lengths)), (lengths - 1).clamp(min=1)]

    def first_step(output, lengths):  # wrong everywhere, as no known mistake is
        return output[:, 0]

    text = feedback(checks.check_gather_final_legal_inputs, student(padding__gather_final=gather_from_step_one))
    assert "gather_final, on a legal input (rows of length 1, output (3, 4, 5)" in text, text
    assert re.findall(r"^\[([A-Z]\d)\]", text, re.MULTILINE) == ["G2"], text
    last_step = variants.of("gather_final")["G1"]  # the values' own
    checks.check_gather_final_legal_inputs(student(padding__gather_final=last_step))
    submission = student(padding__gather_final=first_step)
    feedback(checks.check_gather_final_values, submission)
    text = feedback(checks.check_gather_final_legal_inputs, submission)
    assert text.startswith("gather_final, on a legal input (float32, ") and not re.search(r"\[[A-Z]\d\]", text), text

"""masked_mean's checks, run in process on rewrites of the reference: what they catch, what they accept."""

import numpy as np
import torch
from in_process import feedback, student

from autograder.todos.masked_mean import checks


def masked_mean_with_a_numpy_mask(output, lengths):
    """A NumPy user's mask: floats, so float64, and the mean with it."""
    steps = np.arange(output.shape[1])
    mask = torch.from_numpy((steps[None, :] < lengths.numpy()[:, None]).astype(float))
    return (output * mask[:, :, None]).sum(dim=1) / lengths[:, None]


def test_it_names_r8_for_a_numpy_mask_on_the_legal_inputs_alone():
    submission = student(padding__masked_mean=masked_mean_with_a_numpy_mask)
    checks.check_masked_mean_values(submission)  # its values are right, in float64
    text = feedback(checks.check_masked_mean_legal_inputs, submission)
    assert text.startswith("[R8] Your mask is made in NumPy, whose floats are float64"), text
    assert "masked_mean is a float64 tensor of shape (4, 5); expected a float32 tensor" in text, text


def test_it_accepts_a_masked_mean_that_multiplies_by_a_mask_the_padding_being_finite():
    def multiplied(output, lengths):
        mask = (torch.arange(output.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(2)
        return (output * mask).sum(1) / lengths.unsqueeze(1).to(output.dtype)

    checks.check_masked_mean_values(student(padding__masked_mean=multiplied))

"""Gradients are made sure of before any arithmetic: a returned gradient of another shape (a stride-0 view of a
trillion elements would broadcast against the direction), another dtype, NaN, or one the codec refused fails the
item with a message, and the grader never multiplies it."""

import pytest
import torch

from autograder.checks import gradients
from autograder.checks.compare import CheckFailure
from autograder.runtime.codec import Refused

DIRECTION = torch.randn(3, 4)


def judged(gradient) -> list[gradients.Judged]:
    """One input, x, whose output is the sum of x times a fixed tensor: its gradient is that tensor."""
    weights = torch.arange(12.0).reshape(3, 4)
    return [gradients.Judged("x", gradient, DIRECTION, lambda step: float((weights * step).sum()))]


def test_it_passes_the_derivative_of_the_output():
    gradients.judge("f", judged(torch.arange(12.0).reshape(3, 4)), "a case")


def test_it_fails_a_gradient_of_another_shape_before_the_broadcast_that_would_materialise_it():
    trillion = torch.arange(12.0).reshape(3, 4).expand(1 << 40, 3, 4)  # (1 << 40, 3, 4) times (3, 4): 48 TiB
    with pytest.raises(CheckFailure, match=r"f: the gradient reaching x has shape \(1099511627776, 3, 4\); expected"):
        gradients.judge("f", judged(trillion), "a case")


def test_it_fails_a_gradient_the_codec_refused_with_its_reason():
    refused = Refused("a float32 tensor of shape (4096, 3, 4) that holds each of its values at 4096 positions")
    with pytest.raises(CheckFailure, match=r"the gradient reaching x is a float32 tensor .* at 4096 positions"):
        gradients.judge("f", judged(refused), "a case")


def test_it_fails_a_gradient_of_another_dtype():
    with pytest.raises(CheckFailure, match=r"has dtype torch\.float64; expected torch\.float32"):
        gradients.judge("f", judged(torch.arange(12.0, dtype=torch.float64).reshape(3, 4)), "a case")


def test_it_fails_a_gradient_holding_nan_which_no_rate_is_far_from():
    gradient = torch.arange(12.0).reshape(3, 4)
    gradient[1, 2] = float("nan")
    with pytest.raises(CheckFailure, match=r"holds NaN or inf, first at index \[1, 2\]"):
        gradients.judge("f", judged(gradient), "a case")


def test_it_fails_gradients_that_are_not_one_per_input_asked_about():
    assert gradients.returned([None, None], 2, "f") == [None, None]
    for grads in (None, [None], {"x": None}):
        with pytest.raises(CheckFailure, match=r"f: its gradients came back as .*; expected a list of 2"):
            gradients.returned(grads, 2, "f")

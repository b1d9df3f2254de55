"""A returned tensor is made sure of (type, dtype, shape) before a check computes with it: one helper,
`expect_shaped`, which every comparison applies as a case is added."""

import pytest
import torch

from autograder.checks.compare import CheckFailure, Comparison, describe_type, expect_shaped
from autograder.runtime.codec import Refused

EXPECTED = torch.arange(12.0).reshape(3, 4)


def test_it_adds_a_case_of_the_expected_shape_and_dtype_and_compares_it():
    comparison = Comparison("f")
    comparison.add("h", EXPECTED.clone(), EXPECTED, "a case")
    comparison.verdict()


def test_it_refuses_a_broadcastable_tensor_as_it_is_added_before_any_arithmetic():
    huge = EXPECTED.expand(1 << 40, 3, 4)  # isclose against (3, 4) would broadcast to 48 TiB
    with pytest.raises(CheckFailure, match=r"h has shape \(1099511627776, 3, 4\); expected \(3, 4\)"):
        Comparison("f").add("h", huge, EXPECTED, "a case")


def test_it_refuses_another_dtype_as_it_is_added():
    with pytest.raises(CheckFailure, match=r"h has dtype torch\.int64; expected torch\.float32"):
        Comparison("f").add("h", EXPECTED.long(), EXPECTED, "a case")


def test_it_says_why_the_codec_refused_a_tensor():
    refused = Refused("a float32 tensor of shape (3, 4) whose positions overlap in memory (strides (1, 1))")
    assert describe_type(refused) == str(refused)
    with pytest.raises(CheckFailure, match=r"h is a float32 tensor of shape \(3, 4\) whose positions overlap"):
        expect_shaped(refused, "h", (3, 4))

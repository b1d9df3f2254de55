"""Legal inputs judged against the reference's results, a known mistake of the other items left to them.

A `legal inputs` item judges the edges of a function's legal domain alone (a batch of one row, rows of length 1, a
hidden size of 1, float64, a result of the input's dtype): there the function must do what the reference does. A
known mistake of the other items, in a function they fail, is charged there, once (`Judge.passed_over`); refusing or
mishandling a legal input costs this item only. Its feedback says which input and how, and names a mistake only when
that mistake's variant gives the student's very result (or error) on it: the domain's own mistakes (an exercise's
`domain`) are named here, never passed over.
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from autograder.checks import calls, catalogue, findings
from autograder.checks.compare import (
    ATOL,
    RTOL,
    CheckFailure,
    Suspects,
    describe_type,
    fail,
    mismatch_report,
    refused_legal_input,
    with_diagnosis,
)
from autograder.student import Raised, StudentError

LEGAL_SEEDS = 50  # the legal inputs' seeds start here, apart from the other items'
Right = Callable[[], bool]  # whether the function passes the items of ordinary inputs (asked when needed)


@dataclass(frozen=True)
class Legal:
    """An edge of a function's legal domain: what it is, in words, and why the docstring allows it."""

    shown: str
    why: str


LENGTH_ONE = Legal("rows of length 1", "each length is in 1..max_length")  # an edge of every padded batch


def raising(error: Raised, suspects: Suspects) -> str | None:
    """The mistake (or combination) whose variant raises the student's very error on this case."""
    return suspects.raising(calls.said(error))


def difference(got: Any, expected: torch.Tensor, what: str, context: str, time_axis: int | None) -> str | None:
    """How `got` differs from the reference's result: its type, shape, dtype (the input's), values; or None."""
    if type(got) is not torch.Tensor or (tuple(got.shape), got.dtype) != (tuple(expected.shape), expected.dtype):
        retyped = type(got) is torch.Tensor and got.dtype != expected.dtype
        keeps = " (a result keeps the input's dtype)" if retyped else ""
        return f"{what} is {describe_type(got)}; expected {describe_type(expected)}{keeps}."
    if got.is_floating_point() and not torch.isfinite(got).all():
        return f"{what} holds NaN or inf."
    return mismatch_report(what, got, expected, time_axis, context)


@dataclass(frozen=True)
class Judge:
    """How one function's legal inputs are judged: `right` on its ordinary inputs (asked when needed), and the
    catalogue's mistakes about its legal domain itself (`domain`: named by this item, never passed over)."""

    right: Right
    domain: frozenset[str]

    def passed_over(self, key: str | None) -> bool:
        """Whether a wrong result (or error) on a legal input is left to the other items: when a known mistake that
        is not about the domain gives it in a function those items fail (P1, G1, P3's time-major packing...), they
        charge it, once. A domain mistake, an unexplained result, a known mistake's result in a function otherwise
        right: this item's."""
        about_the_domain = key is not None and bool(set(catalogue.ids(key)) & self.domain)
        return key is not None and not about_the_domain and not self.right()

    def raised(self, error: Raised, key: str | None, legal: Legal, context: str) -> None:
        """A raise on a legal input costs this item, unless passed over: the student's own error, explained."""
        if self.passed_over(key):
            return
        text = with_diagnosis(key, refused_legal_input(error, f"{legal.shown}, {context}", legal.why))
        raise Raised(text, error.error_type, error.error_message)  # the student's own error: the item failed "raised"

    def result(
        self, function: str, got: Any, problem: str | None, suspects: Suspects, legal: Legal, context: str
    ) -> None:
        """A result on a legal input passes when it is the reference's; otherwise it costs this item unless passed
        over, naming the mistake whose variant gives it on this input, if any."""
        if problem is None:
            return
        key = _reproducing(got, suspects)
        if self.passed_over(key):
            return
        fail(with_diagnosis(key, f"{function}, on a legal input ({legal.shown}, {context}; {legal.why}):\n{problem}"))


def right_on_ordinary_inputs(student, checks: tuple[Callable[[Any], None], ...]) -> Right:
    """Whether the function passes the checks of its ordinary inputs, asked once and only when needed: a known
    mistake they charge is not charged here as well."""

    @functools.cache
    def right() -> bool:
        with findings.recording():  # what those checks name is their items', not this one's
            try:
                for check in checks:
                    check(student)
            except (CheckFailure, StudentError):
                return False
        return True

    return right


def _same(got: Any, variant: Any) -> bool:
    """The same result: tensors of one shape and dtype holding the same values, or pairs of them."""
    if type(got) in (tuple, list):
        return type(variant) in (tuple, list) and len(variant) == len(got) and all(map(_same, got, variant))
    if type(got) is not torch.Tensor or type(variant) is not torch.Tensor:
        return False
    if (got.shape, got.dtype) != (variant.shape, variant.dtype):
        return False
    if not got.is_floating_point():
        return bool(torch.equal(got, variant))
    return bool(torch.allclose(got, variant, atol=ATOL, rtol=RTOL, equal_nan=True))


def _reproducing(got: Any, suspects: Suspects) -> str | None:
    """The first mistake (then combination, fewest first) whose variant gives exactly `got` on this case."""
    for size in range(1, suspects.most + 1):
        for key in suspects.mistakes(size):
            if _same(got, suspects.output(key)):
                return key
    return None

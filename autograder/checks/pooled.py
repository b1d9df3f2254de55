"""A padded batch's output pooled to one row per sequence: the cases and the judging of the functions that pool it.

A pooling function takes `output` (batch, max_length, hidden) and `lengths` and returns (batch, hidden). Its values
item compares it with the reference on unsorted batches with a full row and garbage in the padding (`compare`); its
legal inputs item judges the edges of its domain against the reference (`legal`, checks/domain.py). Each exercise
says what is its own (`Pooling`): its function, its variants, the error that names one of its mistakes alone, the
mistakes about its domain.
"""

from collections.abc import Callable
from dataclasses import dataclass

import torch

from autograder.checks import domain, variants
from autograder.checks.compare import Comparison, Suspects, as_float32, fail, untouched, verdict_then, with_diagnosis
from autograder.checks.domain import LEGAL_SEEDS, LENGTH_ONE, Legal
from autograder.checks.inputs import garbage_after, normal
from autograder.student import Raised
from solutions import padding as reference


@dataclass(frozen=True)
class Pooled:
    rows: list[int]  # each row's length
    steps: int  # the padded length
    hidden: int = 5
    dtype: torch.dtype = torch.float32
    legal: Legal | None = None  # the edge of the legal domain it stands for, for `legal inputs`


# unsorted, each with a full row (index lengths is out of bounds there), garbage in the padding
POOLED = [Pooled([4, 6, 2, 5], 6), Pooled([3, 2, 4], 4), Pooled([5, 5], 5), Pooled([2, 5, 3], 5)]
OUTPUT_ROW = Legal("a batch of one row", "output is (batch, max_length, hidden) for any batch, 1 included")
OUTPUT_UNIT = Legal("a hidden size of 1", "output is (batch, max_length, hidden) for any hidden size, 1 included")
LEGAL_POOLED = [
    Pooled([3, 6, 2, 5], 6, legal=Legal("float32", "the result has output's dtype: float32 for a float32 output")),
    Pooled([3], 5, legal=OUTPUT_ROW),
    Pooled([1, 4, 1], 4, legal=LENGTH_ONE),
    Pooled([4, 6, 2], 6, hidden=1, legal=OUTPUT_UNIT),
    Pooled([2], 3, hidden=1, legal=Legal("a batch of one row with a hidden size of 1", OUTPUT_UNIT.why)),
    Pooled([4, 6, 2, 5], 6, dtype=torch.float64, legal=Legal("float64", "the result has output's dtype")),
]
POOLED_PLACES = {"0": "output", "1": "lengths"}  # an argument's place -> its name (L3)


@dataclass(frozen=True)
class PooledCase:
    output: torch.Tensor
    lengths: torch.Tensor
    context: str
    legal: Legal | None = None


@dataclass(frozen=True)
class Pooling:
    """One pooling function, as its items judge it."""

    function: str  # "gather_final": padding.<function>
    table: variants.Table  # its known mistakes
    domain: frozenset[str]  # the catalogue's mistakes about its legal domain itself: named by legal_inputs
    named: Callable[[Raised], str | None] = lambda error: None  # the mistake an error alone names (G2), if any


def _pooled_case(pooled: Pooled, number: int) -> PooledCase:
    lengths = torch.tensor(pooled.rows)
    output = garbage_after(normal(len(pooled.rows), pooled.steps, pooled.hidden, seed=number), lengths, seed=number)
    output = output.to(pooled.dtype)
    dtype = "" if pooled.dtype == torch.float32 else f" {str(pooled.dtype).removeprefix('torch.')}"
    return PooledCase(output, lengths, f"output {tuple(output.shape)}{dtype}, lengths {pooled.rows}", pooled.legal)


def _pooled_cases() -> list[PooledCase]:
    return [_pooled_case(pooled, number) for number, pooled in enumerate(POOLED)]


def _legal_pooled_cases() -> list[PooledCase]:
    return [_pooled_case(pooled, LEGAL_SEEDS + number) for number, pooled in enumerate(LEGAL_POOLED)]


def _pooled_suspects(table: variants.Table, case: PooledCase) -> Suspects:
    return Suspects(table, lambda variant, c=case: variant(c.output.clone(), c.lengths.clone()))


def compare(student, pooling: Pooling) -> None:
    """The values on every case against the reference's; the caller's tensors written into (L3) said after them."""
    function, comparison, changed = pooling.function, Comparison(pooling.function), None
    for case in _pooled_cases():
        try:
            call = student.run(f"padding.{function}", case.output, case.lengths)
        except Raised as error:
            key = pooling.named(error)
            if key is not None:
                fail(with_diagnosis(key, f"{function} raised {error.error_type} on lengths {case.lengths.tolist()}."))
            raise
        changed = changed or untouched(call, function, POOLED_PLACES)  # L3: said after the values
        got = as_float32(call.value, function, (case.output.shape[0], case.output.shape[2]))
        expected = getattr(reference, function)(case.output, case.lengths)
        comparison.add(function, got, expected, case.context, _pooled_suspects(pooling.table, case))
    verdict_then(comparison, changed)


def legal(student, pooling: Pooling) -> None:
    """Each edge of the legal domain: the result as the reference's, of output's dtype, or as a mistake the values
    item grades."""
    function = pooling.function
    right = domain.right_on_ordinary_inputs(student, (lambda checked: compare(checked, pooling),))
    judge = domain.Judge(right, pooling.domain)
    for case in _legal_pooled_cases():
        suspects = _pooled_suspects(pooling.table, case)
        try:
            got = student.run(f"padding.{function}", case.output, case.lengths).value
        except Raised as error:
            key = pooling.named(error) or domain.raising(error, suspects)
            judge.raised(error, key, case.legal, case.context)
            continue
        expected = getattr(reference, function)(case.output, case.lengths)
        problem = domain.difference(got, expected, function, case.context, None)
        judge.result(function, got, problem, suspects, case.legal, case.context)

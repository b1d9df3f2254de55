"""Checks for TODO 3 (encode_packed), TODO 4 (gather_final) and TODO 5 (masked_mean).

`encode_packed: skips padding` is judged on the student's own outputs alone: the same batch with
zeros and with garbage in the padding must give the same results, whatever their values.
"""

from dataclasses import dataclass

import torch
from torch import nn

from autograder.checks import variants
from autograder.checks.compare import (
    ATOL,
    RTOL,
    Comparison,
    Suspects,
    expect_pair,
    expect_tensor,
    fail,
    untouched,
    verdict_then,
    with_diagnosis,
)
from autograder.checks.inputs import garbage_after, normal, seeded_module
from autograder.student import Raised
from solutions import padding as reference

LAYERS = {"RNN": nn.RNN, "GRU": nn.GRU, "LSTM": nn.LSTM}


@dataclass(frozen=True)
class Padded:
    rows: list[int]  # each row's length
    steps: int  # the padded length


# unsorted with a length-1 row; all full length; mostly padding, padded beyond the longest row; a batch
# of 1 padded beyond its row
LENGTHS = [Padded([3, 5, 1, 4], 5), Padded([6, 6, 6], 6), Padded([1, 2, 1, 7, 1], 9), Padded([4], 6)]
FEATURES, HIDDEN = 3, 4


@dataclass(frozen=True)
class PackedCase:
    kind: str  # "RNN", "GRU" or "LSTM"
    layer: nn.Module
    embedded: torch.Tensor
    lengths: torch.Tensor
    context: str

    @property
    def shape(self) -> tuple[int, int, int]:
        """(batch, padded length, hidden) of the output."""
        return (self.embedded.shape[0], self.embedded.shape[1], self.layer.hidden_size)


def packed_cases(garbage: bool) -> list[PackedCase]:
    cases = []
    for number, (kind, padded) in enumerate((kind, case) for kind in LAYERS for case in LENGTHS):
        rows = padded.rows
        lengths = torch.tensor(rows)
        embedded = normal(len(rows), padded.steps, FEATURES, seed=number)
        pad = garbage_after(embedded, lengths, seed=number) if garbage else garbage_after(embedded, lengths, number, 0)
        layer = seeded_module(LAYERS[kind], FEATURES, HIDDEN, batch_first=True, seed=number)
        context = f"nn.{kind}, lengths {rows} padded to {padded.steps}, padding {'non-zero' if garbage else 'zeros'}"
        cases.append(PackedCase(kind, layer, pad, lengths, context))
    return cases


TIME_MAJOR_ERRORS = ("exceeds dimension size", "len(lengths)", "Expected `len(lengths)`")


def _encode(student, case: PackedCase, embedded: torch.Tensor | None = None):
    """Call encode_packed; a packing read time-major (P3) usually fails on the lengths, one left with
    enforce_sorted=True (P2) on their order."""
    try:
        given = case.embedded if embedded is None else embedded
        return student.run("padding.encode_packed", case.layer, given, case.lengths).value
    except Raised as error:
        if error.error_type == "RuntimeError" and "enforce_sorted" in error.error_message:  # PyTorch's own words
            fail(
                with_diagnosis(
                    "P2:enforce_sorted", f"encode_packed raised {error.error_type} on lengths {case.lengths.tolist()}."
                )
            )
        if error.error_type == "RuntimeError" and any(text in error.error_message for text in TIME_MAJOR_ERRORS):
            fail(
                with_diagnosis("P3", f"encode_packed raised {error.error_type}: {error.error_message.splitlines()[0]}")
            )
        raise


def _checked_output(output, case: PackedCase) -> torch.Tensor:
    """The output, if it is (batch, max_length, hidden); a time-major output is P3, one cut at the longest row P5."""
    batch, length, hidden = case.shape
    shape = tuple(output.shape) if type(output) is torch.Tensor else None
    if shape == (length, batch, hidden) and batch != length:
        fail(with_diagnosis("P3", f"output has shape {shape}; expected {(batch, length, hidden)}."))
    if shape == (batch, int(case.lengths.max()), hidden) and length > int(case.lengths.max()):
        report = (
            f"output has shape {shape}; expected {(batch, length, hidden)}: the batch is padded to {length} steps, "
            f"beyond its longest row ({case.context})."
        )
        fail(with_diagnosis("P5", report))
    return expect_tensor(output, "output", case.shape)


def _checked_state(h_n, case: PackedCase) -> torch.Tensor:
    """h_n, if it is (batch, hidden); the unpacked output's last row (length, hidden) is P4."""
    batch, length, hidden = case.shape
    if type(h_n) is torch.Tensor and tuple(h_n.shape) == (length, hidden) and batch != length:
        report = f"h_n has shape {tuple(h_n.shape)}; expected {(batch, hidden)}: it is one row of the output."
        fail(with_diagnosis("P4", report))
    return expect_tensor(h_n, "h_n", (batch, hidden))


def _compare_packed(student, which: str) -> None:
    comparison = Comparison("encode_packed", time_axis={"output": 1})
    index = 0 if which == "output" else 1
    for case in packed_cases(garbage=False):
        output, h_n = expect_pair(_encode(student, case), "encode_packed", ("output", "h_n"))
        got = _checked_output(output, case) if which == "output" else _checked_state(h_n, case)
        with torch.no_grad():
            expected = reference.encode_packed(case.layer, case.embedded, case.lengths)[index]
        suspects = Suspects(variants.ENCODE_PACKED, lambda variant, c=case: _no_grad(variant, c)[index])
        comparison.add(which, got, expected, case.context, suspects)
    comparison.verdict()


def _no_grad(variant, case: PackedCase, embedded: torch.Tensor | None = None):
    with torch.no_grad():
        return variant(case.layer, case.embedded if embedded is None else embedded, case.lengths)


def check_encode_packed_final_state(student) -> None:
    """h_n holds each row's state after its own last real step (RNN, GRU, LSTM)."""
    _compare_packed(student, "h_n")


def check_encode_packed_output(student) -> None:
    """output equals each row run alone, with zeros after the row's length."""
    _compare_packed(student, "output")


def _own_pair(value, case: PackedCase) -> tuple[torch.Tensor, torch.Tensor]:
    """(output, h_n) as float tensors of whatever shape: skips_padding compares the student with themself."""
    output, h_n = expect_pair(value, "encode_packed", ("output", "h_n"))
    batch, _, hidden = case.shape
    shaped = [
        tuple(part.shape) if type(part) is torch.Tensor else shape
        for part, shape in ((output, case.shape), (h_n, (batch, hidden)))
    ]
    return expect_tensor(output, "output", shaped[0]), expect_tensor(h_n, "h_n", shaped[1])


def check_encode_packed_skips_padding(student) -> None:
    """Garbage in the padding changes nothing: the same batch with zeros and with garbage after each row's
    length gives the same output and h_n (the student's own, whatever their values)."""
    clean, noisy = packed_cases(garbage=False), packed_cases(garbage=True)
    comparison = Comparison("encode_packed", time_axis={"output": 1})
    for index, what in ((1, "h_n"), (0, "output")):
        for zeros, garbage in zip(clean, noisy, strict=True):
            own = _own_pair(_encode(student, zeros), zeros)[index]
            got = _own_pair(_encode(student, garbage), garbage)[index]
            if got.shape != own.shape:
                fail(f"{what} has shape {tuple(got.shape)} with garbage in the padding, {tuple(own.shape)} with zeros.")
            context = f"your own {what} with zeros in the padding, against garbage in it; {garbage.context}"
            suspects = Suspects(variants.ENCODE_PACKED, lambda variant, c=garbage, i=index: _no_grad(variant, c)[i])
            comparison.add(what, got, own, context, suspects)
    comparison.verdict()
    full = clean[1]  # no padding: every step is real
    _, h_n = _own_pair(_encode(student, full), full)
    _, moved = _own_pair(_encode(student, full, full.embedded + 1.0), full)
    if torch.allclose(h_n, moved, atol=ATOL, rtol=RTOL):
        fail(f"encode_packed's h_n does not change when the steps change ({full.context}): run the layer over them.")


# -- gather_final / masked_mean ------------------------------------------------------------
@dataclass(frozen=True)
class PooledCase:
    output: torch.Tensor
    lengths: torch.Tensor
    context: str


def _pooled_cases() -> list[PooledCase]:
    """Unsorted lengths, full rows, a batch of 1; the last in float64 (the result keeps the dtype)."""
    cases = []
    for number, rows in enumerate([[3, 5, 1, 4], [2, 1, 3], [6, 6], [1], [2, 4, 1]]):
        lengths = torch.tensor(rows)
        output = garbage_after(normal(len(rows), max(*rows, 2), 5, seed=number), lengths, seed=number)
        output = output.double() if number == 4 else output
        dtype = "" if output.dtype == torch.float32 else f" {str(output.dtype).removeprefix('torch.')}"
        cases.append(PooledCase(output, lengths, f"output {tuple(output.shape)}{dtype}, lengths {rows}"))
    return cases


def _out_of_bounds(error: Raised) -> bool:
    return error.error_type in ("IndexError", "RuntimeError") and any(
        text in error.error_message for text in ("out of bounds", "out of range")
    )


def _misshapen(got, suspects: Suspects) -> str | None:
    """The mistake whose variant returns exactly this tensor of the wrong shape (G5's lost batch axis)."""
    if type(got) is not torch.Tensor:
        return None
    for key in suspects.mistakes():
        variant = suspects.output(key)
        if type(variant) is torch.Tensor and variant.shape == got.shape and torch.allclose(got, variant.to(got)):
            return key
    return None


POOLED_PLACES = {"0": "output", "1": "lengths"}  # an argument's place -> its name (L3)


def _compare_pooled(student, function: str, table: variants.Table) -> None:
    comparison, changed = Comparison(function), None
    for case in _pooled_cases():
        try:
            call = student.run(f"padding.{function}", case.output, case.lengths)
            changed = changed or untouched(call, function, POOLED_PLACES)  # L3: said after the values
            got = call.value
        except Raised as error:
            if function == "gather_final" and _out_of_bounds(error):
                report = f"gather_final raised {error.error_type} on lengths {case.lengths.tolist()}."
                fail(with_diagnosis("G2", report))
            raise
        suspects = Suspects(table, lambda variant, c=case: variant(c.output.clone(), c.lengths.clone()))
        shape = (case.output.shape[0], case.output.shape[2])
        if type(got) is torch.Tensor and tuple(got.shape) != shape and (mistake := _misshapen(got, suspects)):
            report = f"{function} returned shape {tuple(got.shape)}; expected {shape} ({case.context})."
            fail(with_diagnosis(mistake, report))
        got = expect_tensor(got, function, shape, case.output.dtype)
        expected = getattr(reference, function)(case.output, case.lengths)
        comparison.add(function, got, expected, case.context, suspects)
    verdict_then(comparison, changed)


def check_gather_final_values(student) -> None:
    """Row i is output[i, lengths[i] - 1], for unsorted lengths, length 1 and full rows."""
    _compare_pooled(student, "gather_final", variants.GATHER_FINAL)


def check_masked_mean_values(student) -> None:
    """Row i is the mean of output[i, :lengths[i]]; the padding holds garbage."""
    _compare_pooled(student, "masked_mean", variants.MASKED_MEAN)

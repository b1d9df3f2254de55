"""The checks of encode_packed's items: its batches, and one check_encode_packed_<aspect> per item of its record.

Every item but `legal inputs` uses batches that every legal solution accepts: two rows or more, rows of two steps or
more, a hidden size above 1, float32 (a result of another float dtype is compared there as float32: the dtype is
judged with the legal inputs). `legal inputs` judges the rest of what the docstring allows, alone, against the
reference (checks/domain.py): a batch of one row, rows of length 1, a hidden size of 1, float64, and a result of the
input's dtype; G5's `.squeeze()` is named there.

`skips padding` is judged on the student's own outputs alone: the same batch with zeros and with garbage in the
padding must give the same results, whatever their values.

A packing that leaves enforce_sorted=True on (P2) raises on unsorted lengths: each batch it refuses is run again with
its rows sorted by length (a legal batch too), so the rest of the function is still judged, and its other mistakes
named beside P2.
"""

from dataclasses import dataclass, replace
from typing import Any

import torch
from torch import nn

from autograder.checks import calls, catalogue, domain, variants
from autograder.checks.compare import (
    ATOL,
    RTOL,
    Comparison,
    Suspects,
    as_float32,
    describe_type,
    expect_pair,
    explaining,
    fail,
    with_diagnosis,
)
from autograder.checks.domain import LEGAL_SEEDS, LENGTH_ONE, Legal
from autograder.checks.inputs import garbage_after, normal, seeded_module
from autograder.student import Raised
from solutions import padding as reference

LAYERS = {"RNN": nn.RNN, "GRU": nn.GRU, "LSTM": nn.LSTM}
FEATURES, HIDDEN = 3, 4
DOMAIN = frozenset({"G5"})  # the catalogue's mistakes about the legal domain itself: named by legal_inputs


@dataclass(frozen=True)
class Padded:
    rows: list[int]  # each row's length
    steps: int  # the padded length
    hidden: int = HIDDEN
    dtype: torch.dtype = torch.float32
    legal: Legal | None = None  # the edge of the legal domain it stands for, for `legal inputs`


# unsorted; all full length; mostly padding, padded beyond the longest row; two rows padded beyond theirs
LENGTHS = [Padded([4, 6, 2, 5], 6), Padded([5, 5, 5], 5), Padded([2, 3, 2, 7, 2], 9), Padded([4, 2], 6)]
ONE_ROW = Legal("a batch of one row", "embedded is (batch, max_length, features) for any batch, 1 included")
HIDDEN_ONE = Legal("a hidden size of 1", "the layer may have any hidden size, 1 included")
FLOAT64 = Legal("float64", "a float64 layer and batch are legal, and give float64 results")
LEGAL_LENGTHS = [
    Padded([3], 5, legal=ONE_ROW),
    Padded([1, 4, 1], 5, legal=LENGTH_ONE),
    Padded([4, 6, 2], 6, hidden=1, legal=HIDDEN_ONE),
    Padded([4, 6, 2, 5], 6, dtype=torch.float64, legal=FLOAT64),
]


@dataclass(frozen=True)
class PackedCase:
    kind: str  # "RNN", "GRU" or "LSTM"
    layer: nn.Module
    embedded: torch.Tensor
    lengths: torch.Tensor
    context: str
    legal: Legal | None = None

    @property
    def shape(self) -> tuple[int, int, int]:
        """(batch, padded length, hidden) of the output."""
        return (self.embedded.shape[0], self.embedded.shape[1], self.layer.hidden_size)

    def sorted_rows(self) -> "PackedCase":
        """The same batch with its rows sorted by decreasing length, as enforce_sorted=True accepts them."""
        order = self.lengths.argsort(descending=True, stable=True)
        lengths = self.lengths[order]
        context = self.context.replace(f"lengths {self.lengths.tolist()}", f"lengths sorted {lengths.tolist()}")
        return replace(self, embedded=self.embedded[order], lengths=lengths, context=context)


def _packed_case(kind: str, padded: Padded, number: int, garbage: bool) -> PackedCase:
    lengths = torch.tensor(padded.rows)
    embedded = normal(len(padded.rows), padded.steps, FEATURES, seed=number)
    pad = garbage_after(embedded, lengths, seed=number) if garbage else garbage_after(embedded, lengths, number, 0)
    layer = seeded_module(LAYERS[kind], FEATURES, padded.hidden, batch_first=True, seed=number)
    layer, pad = layer.to(padded.dtype), pad.to(padded.dtype)
    context = f"nn.{kind}, lengths {padded.rows} padded to {padded.steps}"
    context += f", hidden size {padded.hidden}" if padded.hidden != HIDDEN else ""
    context += f", {str(padded.dtype).removeprefix('torch.')}" if padded.dtype != torch.float32 else ""
    context += f", padding {'non-zero' if garbage else 'zeros'}"
    return PackedCase(kind, layer, pad, lengths, context, padded.legal)


def packed_cases(garbage: bool) -> list[PackedCase]:
    pairs = [(kind, padded) for kind in LAYERS for padded in LENGTHS]
    return [_packed_case(kind, padded, number, garbage) for number, (kind, padded) in enumerate(pairs)]


def legal_packed_cases() -> list[PackedCase]:
    """Each edge of encode_packed's legal domain, with nn.RNN, nn.GRU and nn.LSTM; garbage in the padding."""
    pairs = [(kind, padded) for padded in LEGAL_LENGTHS for kind in LAYERS]
    return [_packed_case(kind, padded, LEGAL_SEEDS + number, True) for number, (kind, padded) in enumerate(pairs)]


TIME_MAJOR_ERRORS = ("exceeds dimension size", "len(lengths)", "Expected `len(lengths)`")


@dataclass(frozen=True)
class Encoded:
    """What encode_packed gave on a batch, and the batch it is judged on: the one given or, when the packing
    refused its unsorted lengths (P2, enforce_sorted left on), the same rows sorted by length."""

    case: PackedCase
    value: Any
    refused: str | None = None  # what the unsorted batch raised


def _time_major(error: Raised) -> bool:
    """A packing read time-major (P3) usually fails on the lengths, in PyTorch's words."""
    return error.error_type == "RuntimeError" and any(text in error.error_message for text in TIME_MAJOR_ERRORS)


def _run_encode(student, case: PackedCase) -> Any:
    return student.run("padding.encode_packed", case.layer, case.embedded, case.lengths).value


def _encode(student, case: PackedCase) -> Encoded:
    """encode_packed on the batch; run again with its rows sorted when the packing refuses unsorted lengths."""
    try:
        return Encoded(case, _run_encode(student, case))
    except Raised as error:
        if error.error_type != "RuntimeError" or "enforce_sorted" not in error.error_message:  # PyTorch's words
            raise
        ranked = case.sorted_rows()
        refused = f"encode_packed raised {error.error_type} on lengths {case.lengths.tolist()}"
        return Encoded(ranked, _run_encode(student, ranked), refused)


def _encoded(student, case: PackedCase) -> Encoded:
    """encode_packed on the batch, for the items of ordinary inputs: a time-major packing (P3) named."""
    try:
        return _encode(student, case)
    except Raised as error:
        if _time_major(error):
            fail(with_diagnosis("P3", f"encode_packed raised {error.error_type}: {calls.first_line(error)}"))
        raise


def _fail_named(key: str | None, report: str, refused: str | None) -> None:
    """Fail naming `key`; P2 first when the packing refused unsorted lengths (its batches were run sorted)."""
    if refused is not None:
        others = [] if key is None else [part for part in key.split("+") if catalogue.ids(part) != ["P2"]]
        key = "+".join(["P2:enforce_sorted", *others])
        report = f"{refused}; with its rows sorted by length:\n{report}"
    fail(with_diagnosis(key, report))


def _verdict(comparison: Comparison, refused: str | None) -> None:
    """The comparison's verdict, P2 leading it when the packing refused unsorted lengths."""
    if refused is None:
        comparison.verdict()
        return
    report = comparison.report()
    if report is None:
        fail(with_diagnosis("P2:enforce_sorted", f"{refused}; with its rows sorted by length, it is right."))
    _fail_named(comparison.diagnosis(), report, refused)


def _expected_shape(which: str, case: PackedCase) -> tuple[int, ...]:
    batch, _, hidden = case.shape
    return case.shape if which == "output" else (batch, hidden)


def _shape_report(which: str, part: Any, case: PackedCase) -> str:
    """What is wrong with the shape of `which` (output or h_n), with what the shape shows."""
    expected, (_, length, hidden), longest = _expected_shape(which, case), case.shape, int(case.lengths.max())
    if type(part) is not torch.Tensor:
        return f"{which} is {describe_type(part)}; expected a tensor of shape {expected} ({case.context})."
    shape, shows = tuple(part.shape), ""
    if which == "output" and length > longest and longest in shape[:2]:
        shows = f": the batch is padded to {length} steps, beyond its longest row"
    if which == "h_n" and shape == (length, hidden):
        shows = ": it is one row of the output"
    return f"{which} has shape {shape}; expected {expected}{shows} ({case.context})."


def _checked_output(output, case: PackedCase, refused: str | None) -> torch.Tensor:
    """The output, if it is (batch, max_length, hidden); a time-major output is P3, one cut at the longest row P5."""
    batch, length, hidden = case.shape
    shape = tuple(output.shape) if type(output) is torch.Tensor else None
    if shape == (length, batch, hidden) and batch != length:
        _fail_named("P3", _shape_report("output", output, case), refused)
    if shape == (batch, int(case.lengths.max()), hidden) and length > int(case.lengths.max()):
        _fail_named("P5", _shape_report("output", output, case), refused)
    return as_float32(output, "output", case.shape)


def _checked_state(h_n, case: PackedCase, refused: str | None) -> torch.Tensor:
    """h_n, if it is (batch, hidden); the unpacked output's last row (length, hidden) is P4."""
    batch, length, hidden = case.shape
    if type(h_n) is torch.Tensor and tuple(h_n.shape) == (length, hidden) and batch != length:
        _fail_named("P4", _shape_report("h_n", h_n, case), refused)
    return as_float32(h_n, "h_n", (batch, hidden))


def _reference_packed(case: PackedCase) -> tuple[torch.Tensor, torch.Tensor]:
    with torch.no_grad():
        return reference.encode_packed(case.layer, case.embedded, case.lengths)


def _no_grad(variant, case: PackedCase):
    with torch.no_grad():
        return variant(case.layer, case.embedded, case.lengths)


def _packed_suspects(case: PackedCase) -> Suspects:
    return Suspects(variants.of("encode_packed"), lambda variant, c=case: _no_grad(variant, c))


def _compare_packed(student, which: str) -> None:
    index = 0 if which == "output" else 1
    runs = [_encoded(student, given) for given in packed_cases(garbage=False)]
    refused = next((run.refused for run in runs if run.refused), None)
    parts = [expect_pair(run.value, "encode_packed", ("output", "h_n"))[index] for run in runs]
    suspects = [_packed_suspects(run.case).part(lambda value, i=index: value[i]) for run in runs]
    _misshapen(which, runs, parts, suspects, refused)
    comparison = Comparison("encode_packed", time_axis={"output": 1})
    for run, part, suspect in zip(runs, parts, suspects, strict=True):
        got = _checked_output(part, run.case, refused) if which == "output" else _checked_state(part, run.case, refused)
        comparison.add(which, got, _reference_packed(run.case)[index], run.case.context, suspect)
    _verdict(comparison, refused)


def _misshapen(
    which: str, runs: list[Encoded], parts: list[Any], suspects: list[Suspects], refused: str | None
) -> None:
    """When `which` has the wrong shape on some batch and a known mistake (or a combination) gives the student's
    results on every batch, fail naming it: unpacked time-major without total_length is P3 and P5 at once."""
    wrong = [
        (run, part)
        for run, part in zip(runs, parts, strict=True)
        if type(part) is not torch.Tensor or tuple(part.shape) != _expected_shape(which, run.case)
    ]
    key = explaining(list(zip(parts, suspects, strict=True)), _alike) if wrong else None
    if key is not None:
        run, part = wrong[0]
        _fail_named(key, _shape_report(which, part, run.case), refused)


def _alike(got: Any, variant: Any) -> bool:
    """The same shape and values, whatever the float dtype (the ordinary items do not judge it)."""
    return (
        type(got) is torch.Tensor
        and type(variant) is torch.Tensor
        and got.shape == variant.shape
        and got.is_floating_point()
        and bool(torch.allclose(got.double(), variant.double(), atol=ATOL, rtol=RTOL))
    )


def check_encode_packed_final_state(student) -> None:
    """h_n holds each row's state after its own last real step (RNN, GRU, LSTM)."""
    _compare_packed(student, "h_n")


def check_encode_packed_output(student) -> None:
    """output equals each row run alone, with zeros after the row's length."""
    _compare_packed(student, "output")


def _own_part(run: Encoded, index: int) -> torch.Tensor:
    """output (index 0) or h_n (1) as a float tensor of whatever shape: skips_padding compares the student with
    themself."""
    pair = expect_pair(run.value, "encode_packed", ("output", "h_n"))
    batch, _, hidden = run.case.shape
    part, shape = pair[index], (run.case.shape, (batch, hidden))[index]
    return as_float32(part, ("output", "h_n")[index], tuple(part.shape) if type(part) is torch.Tensor else shape)


def check_encode_packed_skips_padding(student) -> None:
    """Garbage in the padding changes nothing: the same batch with zeros and with garbage after each row's
    length gives the same output and h_n (the student's own, whatever their values; a batch the packing
    refuses unsorted is judged sorted)."""
    clean, noisy = packed_cases(garbage=False), packed_cases(garbage=True)
    comparison = Comparison("encode_packed", time_axis={"output": 1})
    for index, what in ((1, "h_n"), (0, "output")):
        for zeros, garbage in zip(clean, noisy, strict=True):
            own, run = _encoded(student, zeros), _encoded(student, garbage)
            mine, got = _own_part(own, index), _own_part(run, index)
            if got.shape != mine.shape:
                fail(
                    f"{what} has shape {tuple(got.shape)} with garbage in the padding, {tuple(mine.shape)} with zeros."
                )
            context = f"your own {what} with zeros in the padding, against garbage in it; {run.case.context}"
            suspects = _packed_suspects(run.case).part(lambda value, i=index: value[i])
            comparison.add(what, got, mine, context, suspects)
    comparison.verdict()
    full = _encoded(student, clean[1])  # no padding: every step is real
    moved = _encoded(student, replace(full.case, embedded=full.case.embedded + 1.0))
    if torch.allclose(_own_part(full, 1), _own_part(moved, 1), atol=ATOL, rtol=RTOL):
        context = full.case.context
        fail(f"encode_packed's h_n does not change when the steps change ({context}): run the layer over them.")


# -- legal_inputs: the edges of the legal domain, judged alone against the reference ------------------
def _packed_difference(value: Any, case: PackedCase) -> str | None:
    if type(value) not in (tuple, list) or len(value) != 2:
        return f"encode_packed returned {describe_type(value)}; expected a tuple (output, h_n)."
    expected = _reference_packed(case)
    for part, wanted, what, axis in zip(value, expected, ("output", "h_n"), (1, None), strict=True):
        problem = domain.difference(part, wanted, what, case.context, axis)
        if problem is not None:
            return problem
    return None


def check_encode_packed_legal_inputs(student) -> None:
    """The edges of the legal domain (a batch of one row, rows of length 1, a hidden size of 1, float64; RNN, GRU,
    LSTM): output and h_n as the reference's, of the input's dtype, or as a mistake the other items grade."""
    right = domain.right_on_ordinary_inputs(student, (check_encode_packed_final_state, check_encode_packed_output))
    judge = domain.Judge(right, DOMAIN)
    for given in legal_packed_cases():
        try:
            run = _encode(student, given)
        except Raised as error:
            key = "P3" if _time_major(error) else domain.raising(error, _packed_suspects(given))
            judge.raised(error, key, given.legal, given.context)
            continue
        suspects = _packed_suspects(run.case)
        problem = _packed_difference(run.value, run.case)
        judge.result("encode_packed", run.value, problem, suspects, given.legal, run.case.context)

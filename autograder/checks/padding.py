"""Checks for TODO 3 (encode_packed), TODO 4 (gather_final) and TODO 5 (masked_mean).

Every item but `legal inputs` uses inputs that every legal solution accepts: batches of two rows or
more, rows of two steps or more, a hidden size above 1, float32 (a result of another float dtype is
compared there as float32: the dtype is judged with the legal inputs). `legal inputs` judges the
rest of what each docstring allows, alone: a batch of one row, rows of length 1, a hidden size of 1,
float64, and a result of the input's dtype. There the function must do what the reference does; a
known mistake of the other items (P1, G1, ...) in a function they fail is charged there, once, and
refusing or mishandling a legal input costs this item only. Its feedback says which input and how,
and names a mistake only when that mistake's variant gives the student's very result (or error) on
it: the domain's own mistakes, G5's `.squeeze()` and R8's NumPy mask, are named there.

`encode_packed: skips padding` is judged on the student's own outputs alone: the same batch with
zeros and with garbage in the padding must give the same results, whatever their values.

A packing that leaves enforce_sorted=True on (P2) raises on unsorted lengths: each batch it refuses
is run again with its rows sorted by length (a legal batch too), so the rest of the function is still
judged, and its other mistakes named beside P2.
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import torch
from torch import nn

from autograder.checks import catalogue, findings, variants
from autograder.checks.compare import (
    ATOL,
    RTOL,
    CheckFailure,
    Comparison,
    Suspects,
    describe_type,
    expect_pair,
    expect_tensor,
    explaining,
    fail,
    mismatch_report,
    refused_legal_input,
    untouched,
    verdict_then,
    with_diagnosis,
)
from autograder.checks.inputs import garbage_after, normal, seeded_module
from autograder.student import Raised, StudentError
from solutions import padding as reference

LAYERS = {"RNN": nn.RNN, "GRU": nn.GRU, "LSTM": nn.LSTM}
FEATURES, HIDDEN = 3, 4
LEGAL_SEEDS = 50  # the legal inputs' seeds start here, apart from the other items'
Right = Callable[[], bool]  # whether the function passes the items of ordinary inputs (asked when needed)
DOMAIN = frozenset({"G5", "R8"})  # the catalogue's mistakes about the legal domain itself: named by legal_inputs


@dataclass(frozen=True)
class Legal:
    """An edge of a function's legal domain: what it is, in words, and why the docstring allows it."""

    shown: str
    why: str


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
LENGTH_ONE = Legal("rows of length 1", "each length is in 1..max_length")
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


def _first_line(error: Raised) -> str:
    return (error.error_message.splitlines() or [""])[0]


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
            fail(with_diagnosis("P3", f"encode_packed raised {error.error_type}: {_first_line(error)}"))
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
    return _as_float32(output, "output", case.shape)


def _checked_state(h_n, case: PackedCase, refused: str | None) -> torch.Tensor:
    """h_n, if it is (batch, hidden); the unpacked output's last row (length, hidden) is P4."""
    batch, length, hidden = case.shape
    if type(h_n) is torch.Tensor and tuple(h_n.shape) == (length, hidden) and batch != length:
        _fail_named("P4", _shape_report("h_n", h_n, case), refused)
    return _as_float32(h_n, "h_n", (batch, hidden))


def _as_float32(value, what: str, shape: tuple[int, ...]) -> torch.Tensor:
    """A floating tensor of `shape`, compared as float32: its dtype is judged by `legal inputs`, not here."""
    if type(value) is torch.Tensor and value.is_floating_point() and tuple(value.shape) == tuple(shape):
        value = value.float()
    return expect_tensor(value, what, shape)


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
    return _as_float32(part, ("output", "h_n")[index], tuple(part.shape) if type(part) is torch.Tensor else shape)


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


# -- the legal domain: every function's edges, judged alone --------------------------------
def _about_the_domain(key: str | None) -> bool:
    return key is not None and bool(set(catalogue.ids(key)) & DOMAIN)


def _raising(error: Raised, suspects: Suspects) -> str | None:
    """The mistake (or combination) whose variant raises the student's very error on this case."""
    return suspects.raising(f"{error.error_type}: {_first_line(error)}")


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


def _difference(got: Any, expected: torch.Tensor, what: str, context: str, time_axis: int | None) -> str | None:
    """How `got` differs from the reference's result: its type, shape, dtype (the input's), values; or None."""
    if type(got) is not torch.Tensor or (tuple(got.shape), got.dtype) != (tuple(expected.shape), expected.dtype):
        retyped = type(got) is torch.Tensor and got.dtype != expected.dtype
        keeps = " (a result keeps the input's dtype)" if retyped else ""
        return f"{what} is {describe_type(got)}; expected {describe_type(expected)}{keeps}."
    if got.is_floating_point() and not torch.isfinite(got).all():
        return f"{what} holds NaN or inf."
    return mismatch_report(what, got, expected, time_axis, context)


def _passed_over(key: str | None, right: Right) -> bool:
    """Whether a wrong result (or error) on a legal input is left to the other items: when a known mistake that is
    not about the domain gives it in a function those items fail (P1, G1, P3's time-major packing...), they charge
    it, once. A domain mistake (G5, R8), an unexplained result, a known mistake's result in a function otherwise
    right: this item's."""
    return key is not None and not _about_the_domain(key) and not right()


def _judge_raised(error: Raised, key: str | None, legal: Legal, context: str, right: Right) -> None:
    """A raise on a legal input costs this item, unless passed over: the student's own error, explained."""
    if _passed_over(key, right):
        return
    said = with_diagnosis(key, refused_legal_input(error, f"{legal.shown}, {context}", legal.why))
    raise Raised(said, error.error_type, error.error_message)  # the student's own error: the item failed "raised"


def _judge_result(
    function: str, got: Any, problem: str | None, suspects: Suspects, legal: Legal, context: str, right: Right
) -> None:
    """A result on a legal input passes when it is the reference's; otherwise it costs this item unless passed
    over, naming the mistake whose variant gives it on this input, if any."""
    if problem is None:
        return
    key = _reproducing(got, suspects)
    if _passed_over(key, right):
        return
    fail(with_diagnosis(key, f"{function}, on a legal input ({legal.shown}, {context}; {legal.why}):\n{problem}"))


def _right_on_ordinary_inputs(student, checks: tuple[Callable[[Any], None], ...]) -> Right:
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


def _packed_difference(value: Any, case: PackedCase) -> str | None:
    if type(value) not in (tuple, list) or len(value) != 2:
        return f"encode_packed returned {describe_type(value)}; expected a tuple (output, h_n)."
    expected = _reference_packed(case)
    for part, wanted, what, axis in zip(value, expected, ("output", "h_n"), (1, None), strict=True):
        problem = _difference(part, wanted, what, case.context, axis)
        if problem is not None:
            return problem
    return None


def check_encode_packed_legal_inputs(student) -> None:
    """The edges of the legal domain (a batch of one row, rows of length 1, a hidden size of 1, float64; RNN, GRU,
    LSTM): output and h_n as the reference's, of the input's dtype, or as a mistake the other items grade."""
    right = _right_on_ordinary_inputs(student, (check_encode_packed_final_state, check_encode_packed_output))
    for given in legal_packed_cases():
        try:
            run = _encode(student, given)
        except Raised as error:
            key = "P3" if _time_major(error) else _raising(error, _packed_suspects(given))
            _judge_raised(error, key, given.legal, given.context, right)
            continue
        suspects = _packed_suspects(run.case)
        problem = _packed_difference(run.value, run.case)
        _judge_result("encode_packed", run.value, problem, suspects, given.legal, run.case.context, right)


# -- gather_final / masked_mean ------------------------------------------------------------
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


@dataclass(frozen=True)
class PooledCase:
    output: torch.Tensor
    lengths: torch.Tensor
    context: str
    legal: Legal | None = None


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


def _out_of_bounds(error: Raised) -> bool:
    return error.error_type in ("IndexError", "RuntimeError") and any(
        text in error.error_message for text in ("out of bounds", "out of range")
    )


POOLED_PLACES = {"0": "output", "1": "lengths"}  # an argument's place -> its name (L3)


def _pooled_suspects(table: variants.Table, case: PooledCase) -> Suspects:
    return Suspects(table, lambda variant, c=case: variant(c.output.clone(), c.lengths.clone()))


def _compare_pooled(student, function: str, table: variants.Table) -> None:
    comparison, changed = Comparison(function), None
    for case in _pooled_cases():
        try:
            call = student.run(f"padding.{function}", case.output, case.lengths)
        except Raised as error:
            if function == "gather_final" and _out_of_bounds(error):  # G2: index lengths, one past the last step
                fail(
                    with_diagnosis("G2", f"gather_final raised {error.error_type} on lengths {case.lengths.tolist()}.")
                )
            raise
        changed = changed or untouched(call, function, POOLED_PLACES)  # L3: said after the values
        got = _as_float32(call.value, function, (case.output.shape[0], case.output.shape[2]))
        expected = getattr(reference, function)(case.output, case.lengths)
        comparison.add(function, got, expected, case.context, _pooled_suspects(table, case))
    verdict_then(comparison, changed)


def _legal_pooled(student, function: str, table: variants.Table) -> None:
    """Each edge of the legal domain: the result as the reference's, of output's dtype, or as a mistake the values
    item grades."""
    right = _right_on_ordinary_inputs(student, (lambda checked: _compare_pooled(checked, function, table),))
    for case in _legal_pooled_cases():
        suspects = _pooled_suspects(table, case)
        try:
            got = student.run(f"padding.{function}", case.output, case.lengths).value
        except Raised as error:
            key = "G2" if function == "gather_final" and _out_of_bounds(error) else _raising(error, suspects)
            _judge_raised(error, key, case.legal, case.context, right)
            continue
        problem = _difference(
            got, getattr(reference, function)(case.output, case.lengths), function, case.context, None
        )
        _judge_result(function, got, problem, suspects, case.legal, case.context, right)


def check_gather_final_values(student) -> None:
    """Row i is output[i, lengths[i] - 1], for unsorted lengths and full rows."""
    _compare_pooled(student, "gather_final", variants.of("gather_final"))


def check_gather_final_legal_inputs(student) -> None:
    """The edges of the legal domain: float32 (the result keeps it), a batch of one row, rows of length 1, a hidden
    size of 1, float64. A `.squeeze()` with no dim (G5) loses an axis there."""
    _legal_pooled(student, "gather_final", variants.of("gather_final"))


def check_masked_mean_values(student) -> None:
    """Row i is the mean of output[i, :lengths[i]]; the padding holds garbage."""
    _compare_pooled(student, "masked_mean", variants.of("masked_mean"))


def check_masked_mean_legal_inputs(student) -> None:
    """The edges of the legal domain: float32 (the result keeps it: a NumPy mask, R8, makes it float64), a batch
    of one row, rows of length 1, a hidden size of 1, float64."""
    _legal_pooled(student, "masked_mean", variants.of("masked_mean"))

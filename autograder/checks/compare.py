"""Validate what a student's function returned and say precisely where it is wrong.

Every check ends here: `expect_tensor` refuses anything that is not exactly a
float tensor of the right shape with finite values (`expect_shaped`, its first half, is the
one place a check makes sure of a returned tensor's type, dtype and shape before any
arithmetic on it: a broadcast of a misshapen answer would cost the grader its memory), and
`Comparison` compares
several cases at once and, when one differs, reports the first mismatch (the
first time step, for recurrent outputs) with a few values, or the catalogue
mistake that explains every case. `Suspects` are the known mistakes' outputs on one
case: every single mistake's when the case is compared, the pairs' only when no single
one explains every case (then the triples'...), and each variant run once per case.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from autograder.checks import catalogue, findings
from autograder.runtime.codec import Refused, Unsupported

ATOL, RTOL = 1e-5, 1e-4  # DESIGN.md: "equals" is allclose(atol=1e-5, rtol=1e-4)
SHOWN = 4  # values printed around a mismatch


class CheckFailure(AssertionError):
    """A check that did not pass; the message is the student's feedback."""


def fail(message: str) -> None:
    raise CheckFailure(message)


def verdict_then(comparison: "Comparison", later: CheckFailure | None) -> None:
    """The comparison's verdict, then `later` (a failure found along the way and said after the values: an
    in-place change, L3; a case left out of the comparison, R8): both said when both fail."""
    try:
        comparison.verdict()
    except CheckFailure as failure:
        if later is None:
            raise
        fail(f"{failure}\n{later}")
    if later is not None:
        raise later


def describe_type(value: Any) -> str:
    if type(value) is Refused:  # a tensor the codec would not hand on: what it is and what is wrong with it
        return str(value)
    if isinstance(value, Unsupported):
        return f"a {value.type_name}"
    if type(value) is torch.Tensor:
        return f"a {str(value.dtype).removeprefix('torch.')} tensor of shape {tuple(value.shape)}"
    if type(value) is np.ndarray:
        return f"a numpy array of shape {value.shape}"
    return f"a {type(value).__name__}"


def expect_shaped(value: Any, what: str, shape: Sequence[int], dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """`value` itself if it is a plain torch.Tensor of `dtype` and `shape`: what a check makes sure of before
    any arithmetic on a returned tensor (the codec has made sure it holds its own values, runtime/received.py)."""
    shape = tuple(shape)
    wanted = f"a {str(dtype).removeprefix('torch.')} tensor of shape {shape}"
    if type(value) is not torch.Tensor:
        fail(f"{what} is {describe_type(value)}; expected {wanted}.")
    if value.dtype != dtype:
        fail(f"{what} has dtype {value.dtype}; expected {dtype}.")
    if tuple(value.shape) != shape:
        fail(f"{what} has shape {tuple(value.shape)}; expected {shape}.")
    return value


def expect_tensor(value: Any, what: str, shape: Sequence[int], dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """`value` itself if it is a plain torch.Tensor of `dtype` and `shape` holding finite values."""
    expect_shaped(value, what, shape, dtype)
    if value.is_floating_point() and not torch.isfinite(value).all():
        index = tuple(int(i) for i in (~torch.isfinite(value)).nonzero()[0])
        fail(f"{what} holds NaN or inf, first at index {list(index)}.")
    return value


def untouched(call: Any, function: str, names: Mapping[str, str], mistake: str = "L3:inputs") -> CheckFailure | None:
    """The failure naming L3 when the call changed the caller's tensors in place (`call.changed`: their places,
    "1" or "1.1", named by `names`), or None: the contract of a function that returns new tensors."""
    if not call.changed:
        return None
    changed = ", ".join(names.get(place, f"argument {place}") for place in call.changed)
    report = f"{function} changed {changed} in place; the caller's values must stay as given."
    return CheckFailure(with_diagnosis(mistake, report))


def expect_pair(value: Any, what: str, names: tuple[str, str]) -> tuple[Any, Any]:
    """A tuple (or list) of two things, as `(output, h_n)` or `(h, c)`."""
    if type(value) not in (tuple, list) or len(value) != 2:
        fail(f"{what} returned {describe_type(value)}; expected a tuple ({names[0]}, {names[1]}).")
    return value[0], value[1]


def numbers(values: torch.Tensor) -> str:
    return "[" + ", ".join(f"{float(v):.4f}" for v in values.flatten()) + "]"


def first_mismatch(got: torch.Tensor, expected: torch.Tensor, time_axis: int | None) -> tuple[int, ...] | None:
    """The index of the first entry out of tolerance; for a time axis, the earliest step first."""
    bad = ~torch.isclose(got, expected, atol=ATOL, rtol=RTOL)
    if not bad.any():
        return None
    if bad.dim() == 0:
        return ()
    if time_axis is not None:
        bad = bad.movedim(time_axis, 0)
    index = tuple(int(i) for i in bad.nonzero()[0])
    if time_axis is not None:
        index = (*index[1 : time_axis + 1], index[0], *index[time_axis + 1 :])
    return index


def mismatch_report(
    what: str, got: torch.Tensor, expected: torch.Tensor, time_axis: int | None, context: str
) -> str | None:
    """Two or three lines on where `got` first differs from `expected`, or None when they agree."""
    index = first_mismatch(got, expected, time_axis)
    if index is None:
        return None
    if not index:
        return f"{what} is {float(got):.6f}; expected {float(expected):.6f} ({context})."
    step = ""
    if time_axis is not None:
        t = index[time_axis]
        step = f" from time step {t} on" + (f" (steps 0-{t - 1} agree)" if t > 0 else "")
    head = index[:-1]
    start = max(0, min(index[-1] - 1, got.shape[-1] - SHOWN))
    end = min(start + SHOWN, got.shape[-1])
    window = (*head, slice(start, end))
    label = f"{what}[{', '.join(map(str, head))}{', ' if head else ''}{start}:{end}]"
    return (
        f"{what} differs{step}, first at {what}[{', '.join(map(str, index))}] ({context}).\n"
        f"  {label} expected {numbers(expected[window])}\n"
        f"  {' ' * len(label)}      got {numbers(got[window])}"
    )


@dataclass(frozen=True)
class Raise:
    """A variant that raised on the case, as the student's error would read: type and first line."""

    error: str


def _outcome(call: Callable[[Callable[..., Any]], Any], variant: Callable[..., Any]) -> Any:
    try:
        return call(variant)
    except Exception as error:
        return Raise(f"{type(error).__name__}: {(str(error).splitlines() or [''])[0]}")


@dataclass
class Suspects:
    """The known mistakes of one function on one case: `call` runs a variant on the case's inputs.

    Each variant runs at most once per case (`cache` is shared by the parts picked from one run:
    `part(lambda output: output[1])`); the combinations run only when `mistakes(size)` asks for them.
    """

    table: Mapping[str, Callable[..., Any]]
    call: Callable[[Callable[..., Any]], Any]
    pick: Callable[[Any], Any] = field(default=lambda output: output)
    cache: dict[str, Any] = field(default_factory=dict)

    def part(self, pick: Callable[[Any], Any]) -> "Suspects":
        return Suspects(self.table, self.call, pick, self.cache)

    def mistakes(self, size: int = 1) -> Iterable[str]:
        """The keys of `size` mistakes at once: the single mistakes, pairs, triples ("C2+C3+C4")..."""
        if size == 1:
            return self.table.keys()
        combinations = getattr(self.table, "combination_keys", None)
        return () if combinations is None else combinations(size)

    @property
    def most(self) -> int:
        return getattr(self.table, "most", 1)

    def _run(self, key: str) -> Any:
        if key not in self.cache:
            self.cache[key] = _outcome(self.call, self.table[key])
        return self.cache[key]

    def output(self, key: str) -> Any:
        """What the variant of `key` gives on this case (its picked part), or None when it raised."""
        outcome = self._run(key)
        if isinstance(outcome, Raise):
            return None
        try:
            return self.pick(outcome)
        except Exception:
            return None

    def raising(self, error: str) -> str | None:
        """The first mistake (then pair, triple...) whose variant raises `error` ("Type: first line") on this case."""
        for size in range(1, self.most + 1):
            for key in self.mistakes(size):
                if self._run(key) == Raise(error):
                    return key
        return None


def explaining(cases: list[tuple[Any, Suspects]], matches: Callable[[Any, Any], bool]) -> str | None:
    """The first mistake, or else the first combination of the fewest mistakes (a pair, a triple...), whose output
    matches the student's on every case: every mistake of the function is named, in any combination."""
    for size in range(1, max((suspects.most for _, suspects in cases), default=1) + 1):
        keys = dict.fromkeys(key for _, suspects in cases for key in suspects.mistakes(size))
        for key in keys:
            if all(matches(got, suspects.output(key)) for got, suspects in cases):
                return key
    return None


@dataclass
class Case:
    """One output of one case: what the student gave, what is expected, the mistakes' outputs."""

    what: str
    context: str
    got: torch.Tensor
    expected: torch.Tensor
    suspects: Suspects


@dataclass
class Comparison:
    """Cases compared together: the first mismatch is reported, mistakes are diagnosed."""

    function: str
    time_axis: dict[str, int] = field(default_factory=dict)
    _cases: list[Case] = field(default_factory=list)

    def add(
        self,
        what: str,
        got: torch.Tensor,
        expected: torch.Tensor,
        context: str,
        suspects: Suspects | None = None,
    ) -> None:
        """Record one output of one case, with the known mistakes' outputs on it: `got` of `expected`'s shape and
        dtype, or the comparison fails here, before any arithmetic."""
        expect_shaped(got, what, expected.shape, expected.dtype)
        none = Suspects({}, lambda variant: variant)
        self._cases.append(Case(what, context, got, expected, suspects or none))

    def diagnosis(self) -> str | None:
        """The first catalogue id (or pair of them) whose variant matches every recorded output."""
        return explaining([(case.got, case.suspects) for case in self._cases], _matches)

    def report(self) -> str | None:
        """Where the first output that differs first differs, or None when every output agrees."""
        for case in self._cases:
            report = mismatch_report(case.what, case.got, case.expected, self.time_axis.get(case.what), case.context)
            if report is not None:
                return report
        return None

    def verdict(self) -> None:
        """Raise CheckFailure when any output differs; say which mistake it is when known."""
        report = self.report()
        if report is not None:
            fail(with_diagnosis(self.diagnosis(), report))


def _matches(got: torch.Tensor, variant: Any) -> bool:
    return (
        type(variant) is torch.Tensor
        and variant.shape == got.shape
        and bool(torch.allclose(got, variant.to(got.dtype), atol=ATOL, rtol=RTOL))
    )


def with_diagnosis(mistake: str | None, report: str) -> str:
    """Lead with the named mistake, when there is one (and record its id for results.json)."""
    if mistake is None:
        return report
    for named in catalogue.ids(mistake):  # "R1:hh" is a form of R1, "C3+C4" or "K3+S5:step" two at once
        findings.name_mistake(named)
    return f"{catalogue.feedback(mistake)}\n{report}"


def refused_legal_input(raised: Exception, shown: str, why: str) -> str:
    """The feedback of a `legal_inputs` item whose call raised: what it raised (with the student's line), then
    which input it was and why the docstring allows it. No id: refusing a legal input is no catalogued mistake."""
    return f"{raised}\nThat input is legal ({shown}): {why}."


def unexplained_ordinary(function: str, context: str) -> str:
    """The feedback of a `legal_inputs` item whose function is wrong on the ordinary input a legal one is judged
    against, in a way no known mistake explains: a function wrong everywhere must not earn it by being judged
    nowhere (an attack that echoes its input)."""
    return (
        f"Your {function}'s results on an ordinary input ({context}) are neither the expected ones nor any known "
        "mistake's, so its legal inputs cannot be judged against them: fix its values first (see the other items)."
    )


def same_values(got: Any, variant: Any) -> bool:
    """Tensors of one shape and dtype holding the same values."""
    return (
        type(got) is torch.Tensor
        and type(variant) is torch.Tensor
        and got.shape == variant.shape
        and got.dtype == variant.dtype
        and bool(torch.allclose(got, variant, atol=ATOL, rtol=RTOL))
    )


def as_float32(value: Any, what: str, shape: tuple[int, ...]) -> torch.Tensor:
    """A floating tensor of `shape`, compared as float32: its dtype is judged by `legal inputs`, not here."""
    if type(value) is torch.Tensor and value.is_floating_point() and tuple(value.shape) == tuple(shape):
        value = value.float()
    return expect_tensor(value, what, shape)


def depends_on_the_input(first: torch.Tensor, second: torch.Tensor, function: str, context: str) -> None:
    """Fail when a function's states on two different inputs are the same: they must be computed from the input."""
    if torch.allclose(first, second, atol=ATOL, rtol=RTOL):
        fail(f"{function}'s states do not change when x changes ({context}): they must be computed from the input.")

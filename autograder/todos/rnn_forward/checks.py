"""The checks of rnn_forward's items: its cases, and one check_rnn_forward_<aspect> per item of its record.

The values items (`output`, `final_state`) compare with the reference; the aspect items judge their aspect alone, on
the student's own outputs: `writes_the_loop` (no recurrent layer called, the documented shapes, states computed from
the input), `initial_state` (h0 is where the recurrence starts, and a run continued from its own state continues it),
`gradients` (the derivatives of the student's own output, reaching every input) and `legal_inputs` (the edges of the
contract: a batch of one row, a sequence of one step, sizes of one, float64, each cut from an ordinary input and
judged against what the student's own function gives there: checks/edges.py).

Every other item uses inputs every legal solution accepts (batches and sequences of two or more, float32), so refusing
or mishandling a legal input costs `legal_inputs` alone. A mistake is named only when its variant (or a combination
of the function's variants) gives what the student's function gives on those inputs: its values, or the very error it
raised (checks/calls.py).
"""

from dataclasses import dataclass
from typing import Any

import torch

from autograder.checks import calls, catalogue, gradients, variants
from autograder.checks.calls import Error
from autograder.checks.compare import (
    ATOL,
    RTOL,
    CheckFailure,
    Comparison,
    Suspects,
    depends_on_the_input,
    expect_pair,
    expect_tensor,
    explaining,
    fail,
    mismatch_report,
    untouched,
    with_diagnosis,
)
from autograder.checks.edges import SIZE_OF_ONE, Edge, Legal, float64, judge_legal, same_results
from autograder.checks.inputs import normal
from autograder.student import Raised
from solutions import recurrence as reference

RNN = "recurrence.rnn_forward"


@dataclass(frozen=True)
class RnnCase:
    batch: int
    length: int
    size: int  # input features
    hidden: int
    seed: int
    diagonal: bool = False  # weights with nothing off the diagonal: each hidden unit reads its own input feature

    def inputs(self, with_h0: bool = False) -> list:
        x = normal(self.batch, self.length, self.size, seed=self.seed)
        weights = [
            normal(self.hidden, self.size, seed=self.seed + 100, scale=0.6),
            normal(self.hidden, self.hidden, seed=self.seed + 200, scale=0.6),
            normal(self.hidden, seed=self.seed + 300, scale=0.5),
            normal(self.hidden, seed=self.seed + 400, scale=0.5),
        ]
        if self.diagonal:
            weights[:2] = [weight * torch.eye(*weight.shape) for weight in weights[:2]]
        h0 = normal(1, self.batch, self.hidden, seed=self.seed + 500) if with_h0 else None
        return [x, *weights, h0]

    def context(self, with_h0: bool) -> str:
        return f"x {self.batch}x{self.length}x{self.size}, hidden {self.hidden}, h0 {'given' if with_h0 else 'None'}"

    def shortened(self, steps: int) -> "RnnCase":
        return RnnCase(self.batch, self.length - steps, self.size, self.hidden, self.seed)


# output and final_state: inputs every legal rnn_forward accepts (two rows or more, two steps or more, float32);
# square and not, more rows than steps (a length read from the batch axis runs past the last step, R4), and
# batch == length and input == hidden, where every known mistake runs
RNN_CASES = [
    RnnCase(batch=3, length=5, size=4, hidden=6, seed=0),
    RnnCase(batch=5, length=2, size=3, hidden=4, seed=1),
    RnnCase(batch=4, length=4, size=5, hidden=5, seed=2),
    RnnCase(batch=2, length=7, size=3, hidden=4, seed=3),
]
SQUARE = RNN_CASES[2]  # every known mistake runs on it (writes_the_loop)
# initial_state and gradients: input == hidden, so a weight left untransposed (R1) runs and they judge their
# aspect; four steps or more, so that the run continued from half way is two steps long or more
STATE_CASES = [RnnCase(3, 5, 4, 4, 4), RnnCase(5, 4, 3, 3, 5), SQUARE, RnnCase(2, 7, 3, 3, 6)]
RNN_INPUTS = ("x", "weight_ih", "weight_hh", "bias_ih", "bias_hh", "h0")
RNN_PLACES = {str(index): name for index, name in enumerate(RNN_INPUTS)}  # an argument's place -> its name (L3)


# -- output and final_state ------------------------------------------------------------------
def _shapes(case: RnnCase) -> tuple[tuple[int, ...], tuple[int, ...]]:
    return (case.batch, case.length, case.hidden), (1, case.batch, case.hidden)


def _problem(what: str, got: Any, expected: torch.Tensor, time_axis: int | None, context: str) -> str | None:
    """What is wrong with one returned part, in a few lines, or None when it equals `expected`."""
    try:
        expect_tensor(got, what, expected.shape, expected.dtype)
    except CheckFailure as failure:
        return f"{str(failure).rstrip('.')} ({context})."
    return mismatch_report(what, got, expected.to(got.dtype), time_axis, context)


def _piece(value: Any, index: int, function: str, names: tuple[str, str]) -> tuple[Any, str | None]:
    """Part `index` of a returned pair (or the error raised), and what is wrong with the pair itself."""
    if isinstance(value, Error):
        return value, None
    try:
        return expect_pair(value, function, names)[index], None
    except CheckFailure as failure:
        return value, str(failure)


def _compare_rnn(student, which: str) -> None:
    """One part of rnn_forward's result, on every case, against the reference's; the mistakes named from every
    case, those where the student's code raised included (R1's shape error beside R5's h_n on a square input)."""
    index, time_axis = (0, 1) if which == "output" else (1, None)
    cases, problems, later = [], [], None
    for case in RNN_CASES:
        args, context = case.inputs(), case.context(False)
        value, call = calls.attempt(student, RNN, args)
        got, malformed = _piece(value, index, "rnn_forward", ("output", "h_n"))
        if isinstance(call, Raised):
            problems.append(f"rnn_forward raised {calls.raise_report(call, context)}")
        else:
            later = later or untouched(call, "rnn_forward", RNN_PLACES)  # L3: said after the values
            expected = reference.rnn_forward(*args)[index]
            problems.append(malformed or _problem(which, got, expected, time_axis, context))
        cases.append((got, calls.outcomes(variants.of("rnn_forward"), args).part(calls.part(index))))
    problem = next((problem for problem in problems if problem), None)
    if problem is not None:
        report = with_diagnosis(explaining(cases, calls.same), problem)
        fail(report if later is None else f"{report}\n{later}")
    calls.raised(later)


def check_rnn_forward_output(student) -> None:
    """The state at every step equals nn.RNN's, starting from zeros."""
    _compare_rnn(student, "output")


def check_rnn_forward_final_state(student) -> None:
    """h_n is the state after the last step, shaped (1, batch, hidden)."""
    _compare_rnn(student, "h_n")


# -- the aspect items, on the student's own outputs ---------------------------------------------
def _call_rnn(student, args: list, case: RnnCase, **options):
    return calls.called(student, RNN, variants.of("rnn_forward"), args, case.context(args[5] is not None), **options)


def _own_layout(value, case: RnnCase, args: list) -> tuple[torch.Tensor, torch.Tensor]:
    """(output, h_n) of the documented shapes, or the output stacked on dim 0 (R7, for the output item to judge):
    the aspect items judge the states whatever the output's layout. Anything else fails, named when a known
    mistake gives the same (R4: a loop over the batch axis)."""
    expected_output, expected_h_n = _shapes(case)
    stacked_on_time = (case.length, case.batch, case.hidden)
    try:
        output, h_n = expect_pair(value, "rnn_forward", ("output", "h_n"))
        layout = stacked_on_time if type(output) is torch.Tensor and output.shape == stacked_on_time else None
        return expect_tensor(output, "output", layout or expected_output), expect_tensor(h_n, "h_n", expected_h_n)
    except CheckFailure as failure:
        report = f"{str(failure).rstrip('.')} ({case.context(args[5] is not None)})."
        fail(with_diagnosis(calls.explained(variants.of("rnn_forward"), value, args), report))


def _states(student, args: list, case: RnnCase, stacked_on_time: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(output, h_n) with the output read batch-first, in the layout the student's output showed (R7 or not);
    the caller's x and h0 left as given (L3: a state written into h0 changes where the caller starts)."""
    call = _call_rnn(student, args, case)
    calls.raised(untouched(call, "rnn_forward", RNN_PLACES))
    output, h_n = _own_layout(call.value, case, args)
    return (output.transpose(0, 1) if stacked_on_time else output), h_n


def _stacked_on_time(student) -> bool:
    """Whether the student's output is (length, batch, hidden) (R7), seen on a batch that is not as long as it is."""
    case = STATE_CASES[0]
    args = case.inputs(with_h0=True)
    output, _ = _own_layout(_call_rnn(student, args, case).value, case, args)
    return output.shape[0] == case.length


def _continued(function, args: list, steps: int) -> torch.Tensor:
    """`function` run on x[:, steps:] from its own state after step steps - 1 (the rest of its own run)."""
    output, _ = function(*args)
    return function(args[0][:, steps:], *args[1:5], output[:, steps - 1].unsqueeze(0))[0]


def _ignores_h0(output: torch.Tensor, args: list, case: RnnCase) -> None:
    """Fail naming R6 (with any mistake made beside it whose variant gives the same output, R1 on a square input):
    the output with h0 given is the output from zeros."""
    report = f"rnn_forward gives the same output with h0 given as with h0=None ({case.context(True)})."
    suspects = calls.outcomes(variants.of("rnn_forward"), args).part(calls.part(0))
    beside = explaining([(output, suspects)], calls.same)
    fail(with_diagnosis(beside if beside is not None and "R6" in catalogue.ids(beside) else "R6", report))


def check_rnn_forward_initial_state(student) -> None:
    """A given h0 is where the recurrence starts: it changes the states, and a run continued from its own
    state after a step continues it (judged on the student's own outputs, whatever their values)."""
    runs, stacked_on_time = [], _stacked_on_time(student)
    for case in STATE_CASES:
        args = case.inputs(with_h0=True)
        output, _ = _states(student, args, case, stacked_on_time)
        from_zeros, _ = _states(student, [*args[:5], None], case, stacked_on_time)
        if torch.allclose(output, from_zeros, atol=ATOL, rtol=RTOL):
            _ignores_h0(output.transpose(0, 1) if stacked_on_time else output, args, case)
        runs.append((case, args, output))
    comparison = Comparison("rnn_forward", time_axis={"output": 1})
    for case, args, output in runs:
        steps = case.length // 2
        shorter = case.shortened(steps)
        rest = [args[0][:, steps:], *args[1:5], output[:, steps - 1].unsqueeze(0)]
        got, _ = _states(student, rest, shorter, stacked_on_time)
        context = f"x[:, {steps}:] from your state after step {steps - 1}, against your output from step {steps} on"
        context += f"; x {case.batch}x{case.length}x{case.size}, hidden {case.hidden}"
        table = variants.of("rnn_forward")
        suspects = Suspects(table, lambda variant, a=args, k=steps: _continued(variant, calls.copied(a), k))
        comparison.add("output", got, output[:, steps:], context, suspects)
    comparison.verdict()


def check_rnn_forward_gradients(student) -> None:
    """Gradients flow back to x, h0 and every weight, and are the derivatives of the loop's own output."""
    for case in STATE_CASES[:3]:
        args = case.inputs(with_h0=True)
        # the shapes first (R4 is named there); the derivatives are those of the student's own output, whatever
        # its layout (R7 costs the output item only)
        call = _call_rnn(student, args, case)
        calls.raised(untouched(call, "rnn_forward", RNN_PLACES))  # L3: h0 written into also breaks its backward
        own = _own_layout(call.value, case, args)
        cotangents = [normal(*part.shape, seed=case.seed + 7 + number) for number, part in enumerate(own)]
        wrt = dict(enumerate(RNN_INPUTS))
        table = variants.of("rnn_forward")
        call = calls.grad_call(student, RNN, table, args, case.context(True), (list(wrt), cotangents))
        run = lambda shifted, case=case: _own_layout(_call_rnn(student, shifted, case).value, case, shifted)  # noqa: E731
        grads = gradients.returned(call.grads, len(wrt), "rnn_forward")
        judged = gradients.judged_inputs(run, args, wrt, grads, cotangents, case.seed)
        gradients.judge("rnn_forward", judged, case.context(True))


def check_rnn_forward_writes_the_loop(student) -> None:
    """The loop is written by hand: nn.RNN and friends are not called, and the documented shapes come back,
    computed from the input (on a batch as long as its rows, where every known mistake runs)."""
    args = SQUARE.inputs()
    call = _call_rnn(student, args, SQUARE)
    if call.layer_calls:
        fail(f"rnn_forward calls {', '.join(call.layer_calls)}: the exercise is to write the loop over time yourself.")
    output, _ = _own_layout(call.value, SQUARE, args)
    other_args = [normal(*args[0].shape, seed=SQUARE.seed + 50), *args[1:]]
    other, _ = _own_layout(_call_rnn(student, other_args, SQUARE).value, SQUARE, other_args)
    depends_on_the_input(output, other, "rnn_forward", SQUARE.context(False))


# -- legal_inputs: the edges of the contract, each cut from an ordinary input ------------------------
def _one_row(args: list) -> list:
    return [args[0][1:2], *args[1:5], args[5][:, 1:2]]


def _row_kept(results: tuple) -> tuple:
    return results[0][1:2], results[1][:, 1:2]


def _one_step(args: list) -> list:
    return [args[0][:, :1], *args[1:]]


def _step_kept(results: tuple) -> tuple:
    return results[0][:, :1], results[0][:, :1].transpose(0, 1)  # after one step, h_n is that step's state


def _one_row_one_step(args: list) -> list:
    return [args[0][:1, :1], *args[1:]]


def _row_step_kept(results: tuple) -> tuple:
    return results[0][:1, :1], results[0][:1, :1].transpose(0, 1)


def _sizes_of_one(args: list) -> list:
    """Unit 0 and input feature 0 of a run whose weights are diagonal: a run of its own."""
    x, weight_ih, weight_hh, bias_ih, bias_hh, h0 = args
    return [x[..., :1], weight_ih[:1, :1], weight_hh[:1, :1], bias_ih[:1], bias_hh[:1], h0[..., :1]]


def _unit_kept(results: tuple) -> tuple:
    return results[0][..., :1], results[1][..., :1]


RNN_ORDINARY = RnnCase(3, 3, 4, 4, seed=20)  # batch == length, input == hidden: every known mistake runs on it
RNN_DIAGONAL = RnnCase(3, 3, 2, 2, seed=21, diagonal=True)  # each unit a run of its own, R1 or not
# (the ordinary input, h0 given, the edge cut from it)
ONE_ROW = "x is (batch, length, input), and a batch may hold a single row"
ONE_STEP = "a sequence may be one step long, and h_n is then the state after that step"
RNN_FLOAT64 = "as nn.RNN does, rnn_forward takes any floating dtype, and its states keep the input's"
RNN_EDGES = [
    (RNN_ORDINARY, True, Edge("a batch of one row", ONE_ROW, _one_row, _row_kept)),
    (RNN_ORDINARY, True, Edge("a sequence of one step", ONE_STEP, _one_step, _step_kept)),
    (RNN_ORDINARY, False, Edge("one row of one step", ONE_STEP, _one_row_one_step, _row_step_kept)),
    (RNN_ORDINARY, False, Edge("a float64 input", RNN_FLOAT64, float64, same_results)),
    (RNN_ORDINARY, True, Edge("a float64 input", RNN_FLOAT64, float64, same_results)),
    (RNN_DIAGONAL, True, Edge("an input size and a hidden size of 1", SIZE_OF_ONE, _sizes_of_one, _unit_kept)),
]


def _rnn_described(args: list) -> str:
    x, h0 = args[0], args[5]
    kind = "" if x.dtype == torch.float32 else f" {str(x.dtype).removeprefix('torch.')}"
    shape = "x".join(map(str, x.shape))
    return f"x{kind} {shape}, hidden {args[2].shape[0]}, h0 {'None' if h0 is None else 'given'}"


RNN_LEGAL = Legal(
    RNN, variants.of("rnn_forward"), reference.rnn_forward, ("output", "h_n"), _rnn_described, frozenset({"R8"})
)


def check_rnn_forward_legal_inputs(student) -> None:
    """Every legal input is taken as the others are: a batch of one row, a sequence of one step, sizes of one,
    float64 (whose states stay float64), each judged against the student's own results on the ordinary input it
    is cut from (so that a mistake of the values costs the other items, not this one)."""
    inputs = {(case, with_h0): case.inputs(with_h0=with_h0) for case, with_h0, _ in RNN_EDGES}
    edges = [(inputs[case, with_h0], edge) for case, with_h0, edge in RNN_EDGES]
    judge_legal(student, RNN_LEGAL, edges)

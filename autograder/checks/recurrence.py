"""Checks for TODO 1 (rnn_forward) and TODO 2 (lstm_step).

The values items compare with the reference; the aspect items judge their aspect alone, on the
student's own outputs: `writes_the_loop` / `writes_the_step` (no recurrent layer called, the
documented shapes, states computed from the input), `initial_state` (h0 is where the recurrence
starts, and a run continued from its own state continues it), `gradients` (the derivatives of
the student's own output, reaching every input) and `legal_inputs` (the edges of the contract: a
batch of one row, a sequence of one step, sizes of one, float64, each cut from an ordinary input
and judged against what the student's own function gives there).

Every other item uses inputs every legal solution accepts (batches and sequences of two or more,
float32), so refusing or mishandling a legal input costs `legal_inputs` alone. A mistake is named
only when its variant (or a combination of the function's variants) gives what the student's
function gives on those inputs: its values, or the very error it raised.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from autograder.checks import catalogue, gradients, variants
from autograder.checks.compare import (
    ATOL,
    RTOL,
    CheckFailure,
    Comparison,
    Suspects,
    expect_pair,
    expect_tensor,
    explaining,
    fail,
    mismatch_report,
    unexplained_ordinary,
    untouched,
    with_diagnosis,
)
from autograder.checks.inputs import normal
from autograder.student import Raised
from solutions import recurrence as reference

RNN = "recurrence.rnn_forward"
LSTM = "recurrence.lstm_step"


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


@dataclass(frozen=True)
class LstmCase:
    batch: int
    size: int
    hidden: int
    seed: int

    def inputs(self) -> list:
        return [
            normal(self.batch, self.size, seed=self.seed),
            (normal(self.batch, self.hidden, seed=self.seed + 1), normal(self.batch, self.hidden, seed=self.seed + 2)),
            normal(4 * self.hidden, self.size, seed=self.seed + 100, scale=0.6),
            normal(4 * self.hidden, self.hidden, seed=self.seed + 200, scale=0.6),
            normal(4 * self.hidden, seed=self.seed + 300, scale=0.5),
            normal(4 * self.hidden, seed=self.seed + 400, scale=0.5),
        ]

    @property
    def context(self) -> str:
        return f"x {self.batch}x{self.size}, hidden {self.hidden}"


# inputs every legal lstm_step accepts: two rows or more, a hidden size of two or more, float32
LSTM_CASES = [LstmCase(3, 4, 5, 0), LstmCase(2, 3, 3, 1), LstmCase(2, 6, 6, 2)]
LSTM_STATE = {"0": "x", "1.0": "the state's h", "1.1": "the state's c"}  # an argument's place -> its name
LSTM_INPUTS = {0: "x", 2: "weight_ih", 3: "weight_hh", 4: "bias_ih", 5: "bias_hh"}  # argument index -> name


# -- what a known mistake gives: its values, or the error it raises ------------------------------
@dataclass(frozen=True)
class Error:
    """An error a call raised, "Type: first line": a known mistake names it only by raising the very same."""

    text: str


def _error_text(kind: str, message: str) -> str:
    return f"{kind}: {(message.splitlines() or [''])[0]}"


def _first_line(error: Raised) -> str:
    return _error_text(error.error_type, error.error_message)


def _outcomes(table: variants.Table, args: list) -> Suspects:
    """The known mistakes of a function on `args`: what each returns, or the error it raises, as an `Error` (so that
    a student's error is named only by a mistake that raises the very same)."""

    def run(variant: Callable[..., Any]) -> Any:
        try:
            return variant(*_copied(args))
        except Exception as error:
            return Error(_error_text(type(error).__name__, str(error)))

    return Suspects(table, run)


def _part(index: int) -> Callable[[Any], Any]:
    """One part of a pair a variant returned; the error itself when it raised."""
    return lambda outcome: outcome if isinstance(outcome, Error) else outcome[index]


def _same(got: Any, known: Any) -> bool:
    """Whether the student's result (an error, a tensor or a pair of them) is what a known mistake gives."""
    if isinstance(got, Error):
        return got == known
    if type(got) in (tuple, list):
        return type(known) in (tuple, list) and len(got) == len(known) and all(map(_same, got, known))
    return (
        type(got) is torch.Tensor
        and type(known) is torch.Tensor
        and got.is_floating_point()
        and (got.dtype, got.shape) == (known.dtype, known.shape)  # made sure of before any arithmetic
        and bool(torch.allclose(got, known, atol=ATOL, rtol=RTOL))
    )


def _explained(table: variants.Table, got: Any, args: list) -> str | None:
    """The known mistake (or combination) that gives the student's result on `args`."""
    return explaining([(got, _outcomes(table, args))], _same)


def _called(student, target: str, table: variants.Table, args: list, context: str, **options):
    """The call; an error it raises fails the item, named when a known mistake raises the same on these inputs
    (an error no known mistake raises goes on as it came: the grading reports it)."""
    try:
        return student.run(target, *args, **options)
    except Raised as error:
        key = _explained(table, Error(_first_line(error)), args)
        if key is None:
            raise
        fail(with_diagnosis(key, f"{target.split('.')[-1]} raised {_raise_report(error, context)}"))


def _attempt(student, target: str, args: list) -> tuple[Any, Any]:
    """(what the call returned, the call), or (the error it raised as an `Error`, the error)."""
    try:
        call = student.run(target, *args)
    except Raised as error:
        return Error(_first_line(error)), error
    return call.value, call


def _raise_report(error: Raised, context: str) -> str:
    """The error as the grading tells it ("Type: message", the student's line, what it means), without its
    "function raised" and with the input it was raised on."""
    first, _, rest = str(error).partition("\n")
    said = (first.partition(" raised ")[2] or _first_line(error)).rstrip(".")
    said += f" ({context})." if context else "."
    return f"{said}\n{rest}" if rest else said


def _raised(failure: CheckFailure | None) -> None:
    if failure is not None:
        raise failure


def _copied(args: list) -> list:
    """The arguments as new tensors: a variant that writes into its inputs (L3) leaves the case's own alone."""
    return [tuple(a.clone() for a in arg) if type(arg) is tuple else _clone(arg) for arg in args]


def _clone(arg):
    return arg.clone() if isinstance(arg, torch.Tensor) else arg


# -- rnn_forward: output and final_state ------------------------------------------------------
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
        value, call = _attempt(student, RNN, args)
        got, malformed = _piece(value, index, "rnn_forward", ("output", "h_n"))
        if isinstance(call, Raised):
            problems.append(f"rnn_forward raised {_raise_report(call, context)}")
        else:
            later = later or untouched(call, "rnn_forward", RNN_PLACES)  # L3: said after the values
            expected = reference.rnn_forward(*args)[index]
            problems.append(malformed or _problem(which, got, expected, time_axis, context))
        cases.append((got, _outcomes(variants.of("rnn_forward"), args).part(_part(index))))
    problem = next((problem for problem in problems if problem), None)
    if problem is not None:
        report = with_diagnosis(explaining(cases, _same), problem)
        fail(report if later is None else f"{report}\n{later}")
    _raised(later)


def check_rnn_forward_output(student) -> None:
    """The state at every step equals nn.RNN's, starting from zeros."""
    _compare_rnn(student, "output")


def check_rnn_forward_final_state(student) -> None:
    """h_n is the state after the last step, shaped (1, batch, hidden)."""
    _compare_rnn(student, "h_n")


# -- rnn_forward: the aspect items, on the student's own outputs -----------------------------------
def _call_rnn(student, args: list, case: RnnCase, **options):
    return _called(student, RNN, variants.of("rnn_forward"), args, case.context(args[5] is not None), **options)


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
        fail(with_diagnosis(_explained(variants.of("rnn_forward"), value, args), report))


def _states(student, args: list, case: RnnCase, stacked_on_time: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(output, h_n) with the output read batch-first, in the layout the student's output showed (R7 or not);
    the caller's x and h0 left as given (L3: a state written into h0 changes where the caller starts)."""
    call = _call_rnn(student, args, case)
    _raised(untouched(call, "rnn_forward", RNN_PLACES))
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
    suspects = _outcomes(variants.of("rnn_forward"), args).part(_part(0))
    beside = explaining([(output, suspects)], _same)
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
        suspects = Suspects(table, lambda variant, a=args, k=steps: _continued(variant, _copied(a), k))
        comparison.add("output", got, output[:, steps:], context, suspects)
    comparison.verdict()


def _weighted(outputs, cotangents: list[torch.Tensor]) -> float:
    return float(sum((o * c).sum() for o, c in zip(outputs, cotangents, strict=True)))


def _judged(run: Callable[[list], tuple], args: list, wrt: dict[int, str], grads: list, cotangents: list, seed: int):
    """Each input of `wrt` with the student's gradient, a direction, and `run` (the student's outputs) moved by it."""
    judged = []
    for number, ((index, name), grad) in enumerate(zip(wrt.items(), grads, strict=True)):
        direction = normal(*args[index].shape, seed=seed + 900 + number)

        def moved(step: torch.Tensor, index: int = index) -> float:
            return _weighted(run([a + step if i == index else a for i, a in enumerate(args)]), cotangents)

        judged.append(gradients.Judged(name, grad, direction, moved))
    return judged


def check_rnn_forward_gradients(student) -> None:
    """Gradients flow back to x, h0 and every weight, and are the derivatives of the loop's own output."""
    for case in STATE_CASES[:3]:
        args = case.inputs(with_h0=True)
        # the shapes first (R4 is named there); the derivatives are those of the student's own output, whatever
        # its layout (R7 costs the output item only)
        call = _call_rnn(student, args, case)
        _raised(untouched(call, "rnn_forward", RNN_PLACES))  # L3: h0 written into also breaks its backward
        own = _own_layout(call.value, case, args)
        cotangents = [normal(*part.shape, seed=case.seed + 7 + number) for number, part in enumerate(own)]
        wrt = dict(enumerate(RNN_INPUTS))
        call = _grad_call(student, RNN, args, list(wrt), cotangents, case.context(True))
        run = lambda shifted, case=case: _own_layout(_call_rnn(student, shifted, case).value, case, shifted)  # noqa: E731
        grads = gradients.returned(call.grads, len(wrt), "rnn_forward")
        gradients.judge("rnn_forward", _judged(run, args, wrt, grads, cotangents, case.seed), case.context(True))


def _grad_call(student, target: str, args: list, wrt: list, cotangents: list, context: str):
    table = variants.of("rnn_forward") if target == RNN else variants.of("lstm_step")
    try:
        return _called(student, target, table, args, context, grad=(wrt, cotangents))
    except Raised as error:
        if error.error_type == "ValueError" and "gradient" in error.error_message:
            fail(f"{target.split('.')[-1]}: {error.error_message}.")
        raise


def _depends_on_the_input(first: torch.Tensor, second: torch.Tensor, function: str, context: str) -> None:
    if torch.allclose(first, second, atol=ATOL, rtol=RTOL):
        fail(f"{function}'s states do not change when x changes ({context}): they must be computed from the input.")


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
    _depends_on_the_input(output, other, "rnn_forward", SQUARE.context(False))


# -- legal_inputs: the edges of the contract, each cut from an ordinary input ------------------------
@dataclass(frozen=True)
class Edge:
    """A legal input cut from an ordinary one (`cut`, on the ordinary input's arguments): what the student's own
    function gives on the ordinary input, cut the same way (`kept`, on its results), is what it must give here."""

    what: str  # the legal input, in words
    rule: str  # what the docstring says of it
    cut: Callable[[list], list]
    kept: Callable[[tuple], tuple]


def _float64(args: list) -> list:
    return [tuple(a.double() for a in arg) if type(arg) is tuple else _double(arg) for arg in args]


def _double(arg):
    return arg.double() if isinstance(arg, torch.Tensor) else arg


def _same_results(results: tuple) -> tuple:
    return results


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
SIZE_OF_ONE = "a size of 1 is a size like any other: every axis stays"
RNN_FLOAT64 = "as nn.RNN does, rnn_forward takes any floating dtype, and its states keep the input's"
RNN_EDGES = [
    (RNN_ORDINARY, True, Edge("a batch of one row", ONE_ROW, _one_row, _row_kept)),
    (RNN_ORDINARY, True, Edge("a sequence of one step", ONE_STEP, _one_step, _step_kept)),
    (RNN_ORDINARY, False, Edge("one row of one step", ONE_STEP, _one_row_one_step, _row_step_kept)),
    (RNN_ORDINARY, False, Edge("a float64 input", RNN_FLOAT64, _float64, _same_results)),
    (RNN_ORDINARY, True, Edge("a float64 input", RNN_FLOAT64, _float64, _same_results)),
    (RNN_DIAGONAL, True, Edge("an input size and a hidden size of 1", SIZE_OF_ONE, _sizes_of_one, _unit_kept)),
]


def _rnn_described(args: list) -> str:
    x, h0 = args[0], args[5]
    kind = "" if x.dtype == torch.float32 else f" {str(x.dtype).removeprefix('torch.')}"
    shape = "x".join(map(str, x.shape))
    return f"x{kind} {shape}, hidden {args[2].shape[0]}, h0 {'None' if h0 is None else 'given'}"


def _lstm_described(args: list) -> str:
    x = args[0]
    kind = "" if x.dtype == torch.float32 else f" {str(x.dtype).removeprefix('torch.')}"
    return f"x{kind} {'x'.join(map(str, x.shape))}, hidden {args[3].shape[1]}"


@dataclass(frozen=True)
class Legal:
    """One function's legal domain, as its legal_inputs item judges it."""

    target: str
    table: variants.Table
    reference: Callable[..., Any]
    names: tuple[str, str]  # the parts of the pair it returns
    describe: Callable[[list], str]  # an input's shapes, in words
    domain: frozenset[str]  # the catalogue's mistakes about the domain itself (R8): named here, never passed over


RNN_LEGAL = Legal(
    RNN, variants.of("rnn_forward"), reference.rnn_forward, ("output", "h_n"), _rnn_described, frozenset({"R8"})
)


def _own_results(student, legal: Legal, args: list) -> tuple[torch.Tensor, torch.Tensor]:
    """The student's results on an ordinary input, made sure of: the edges are judged against them."""
    function = legal.target.split(".")[-1]
    call = _called(student, legal.target, legal.table, args, legal.describe(args))
    expected = legal.reference(*_copied(args))
    try:
        pair = expect_pair(call.value, function, legal.names)
        results = tuple(map(expect_tensor, pair, legal.names, (part.shape for part in expected)))
    except CheckFailure as failure:
        report = f"{str(failure).rstrip('.')} ({legal.describe(args)})."
        fail(with_diagnosis(_explained(legal.table, call.value, args), report))
    if not _same(results, tuple(expected)) and _explained(legal.table, results, args) is None:
        fail(unexplained_ordinary(function, legal.describe(args)))
    return results


UNLIKE_ITS_OWN = "Here your function's results differ from its own on the same numbers inside an ordinary input:"


def _edge_problem(legal: Legal, value: Any, kept: tuple, args: list) -> str | None:
    """What is wrong with the student's result on an edge (not an error), against its own results cut the same
    way."""
    function, context = legal.target.split(".")[-1], legal.describe(args)
    try:
        pair = expect_pair(value, function, legal.names)
        named = zip(pair, legal.names, kept, strict=True)
        parts = [expect_tensor(part, name, own.shape, args[0].dtype) for part, name, own in named]
    except CheckFailure as failure:
        return str(failure)
    for part, name, own in zip(parts, legal.names, kept, strict=True):
        report = mismatch_report(name, part, own.to(part.dtype), 1 if part.dim() == 3 else None, context)
        if report is not None:
            return f"{UNLIKE_ITS_OWN}\n{report}"
    return None


def _judge_legal(student, legal: Legal, edges: list[tuple[list, Edge]]) -> None:
    """Each edge against the student's own results on the ordinary input it is cut from. An edge whose result a
    known mistake that is not about the domain gives is passed over: the item that mistake fails names it."""
    own: dict[int, tuple] = {}  # the student's results on each ordinary input, asked for once
    for ordinary, edge in edges:
        if id(ordinary) not in own:
            own[id(ordinary)] = _own_results(student, legal, ordinary)
        kept = edge.kept(own[id(ordinary)])
        args = _copied(edge.cut(ordinary))
        value, call = _attempt(student, legal.target, args)
        if isinstance(call, Raised):
            problem = f"It raised {_raise_report(call, '')}"
        else:
            problem = _edge_problem(legal, value, kept, args)
        if problem is None:
            continue
        key = _explained(legal.table, value, args)
        if key is not None and not set(catalogue.ids(key)) & legal.domain:
            continue
        fail(with_diagnosis(key, f"This input is legal: {edge.what} ({legal.describe(args)}): {edge.rule}.\n{problem}"))


def check_rnn_forward_legal_inputs(student) -> None:
    """Every legal input is taken as the others are: a batch of one row, a sequence of one step, sizes of one,
    float64 (whose states stay float64), each judged against the student's own results on the ordinary input it
    is cut from (so that a mistake of the values costs the other items, not this one)."""
    inputs = {(case, with_h0): case.inputs(with_h0=with_h0) for case, with_h0, _ in RNN_EDGES}
    edges = [(inputs[case, with_h0], edge) for case, with_h0, edge in RNN_EDGES]
    _judge_legal(student, RNN_LEGAL, edges)


# -- lstm_step -----------------------------------------------------------------------------
def _lstm_pair(value, case: LstmCase, args: list) -> tuple[torch.Tensor, torch.Tensor]:
    """(h, c), each (batch, hidden); anything else fails, named when a known mistake gives the same."""
    try:
        h, c = expect_pair(value, "lstm_step", ("h", "c"))
        return expect_tensor(h, "h", (case.batch, case.hidden)), expect_tensor(c, "c", (case.batch, case.hidden))
    except CheckFailure as failure:
        report = f"{str(failure).rstrip('.')} ({case.context})."
        fail(with_diagnosis(_explained(variants.of("lstm_step"), value, args), report))


def _call_lstm(student, args: list, case: LstmCase):
    return _called(student, LSTM, variants.of("lstm_step"), args, case.context)


def _run_lstm(student, args: list, case: LstmCase) -> tuple[torch.Tensor, torch.Tensor]:
    return _lstm_pair(_call_lstm(student, args, case).value, case, args)


def _untouched(call, function: str, names: dict[str, str]) -> None:
    """The caller's tensors are as it passed them (the contract: a step returns new tensors)."""
    _raised(untouched(call, function, names, "L3"))


def check_lstm_step_values(student) -> None:
    """The new (h, c) equal nn.LSTMCell's, and the caller's state is left as it was given."""
    comparison = Comparison("lstm_step")
    for case in LSTM_CASES:
        args = case.inputs()
        call = _call_lstm(student, args, case)
        _untouched(call, "lstm_step", LSTM_STATE)
        got = _lstm_pair(call.value, case, args)
        expected = reference.lstm_step(*args)
        suspects = Suspects(variants.of("lstm_step"), lambda variant, args=args: variant(*_copied(args)))
        for index in (0, 1):
            part = suspects.part(lambda output, index=index: output[index])
            comparison.add("hc"[index], got[index], expected[index], case.context, part)
    comparison.verdict()


def check_lstm_step_gradients(student) -> None:
    """Gradients reach x and every weight, and are the derivatives of the step's own output."""
    for case in LSTM_CASES[:2]:
        args = case.inputs()
        call = _call_lstm(student, args, case)  # a caller's c written into breaks its backward: L3
        _untouched(call, "lstm_step", LSTM_STATE)
        _lstm_pair(call.value, case, args)
        cotangents = [normal(case.batch, case.hidden, seed=case.seed + k) for k in (7, 8)]
        call = _grad_call(student, LSTM, args, list(LSTM_INPUTS), cotangents, case.context)
        run = lambda shifted, case=case: _run_lstm(student, shifted, case)  # noqa: E731
        grads = gradients.returned(call.grads, len(LSTM_INPUTS), "lstm_step")
        gradients.judge("lstm_step", _judged(run, args, LSTM_INPUTS, grads, cotangents, case.seed), case.context)


def check_lstm_step_writes_the_step(student) -> None:
    """The step is written by hand: nn.LSTMCell and friends are not called, and (h, c) come back shaped
    (batch, hidden), computed from the input."""
    case = LSTM_CASES[0]
    args = case.inputs()
    call = _call_lstm(student, args, case)
    if call.layer_calls:
        fail(f"lstm_step calls {', '.join(call.layer_calls)}: the exercise is to write the gate arithmetic yourself.")
    h, _ = _lstm_pair(call.value, case, args)
    other, _ = _run_lstm(student, [normal(*args[0].shape, seed=case.seed + 50), *args[1:]], case)
    _depends_on_the_input(h, other, "lstm_step", case.context)


def _lstm_one_row(args: list) -> list:
    x, (h, c), *weights = args
    return [x[1:2], (h[1:2], c[1:2]), *weights]


def _lstm_row_kept(results: tuple) -> tuple:
    return results[0][1:2], results[1][1:2]


def _lstm_unit_zero(args: list) -> list:
    """An ordinary input whose gates of hidden unit 0 read nothing of unit 1's state: unit 0 is a step of its own."""
    x, state, weight_ih, weight_hh, *biases = args
    weight_hh = weight_hh.clone()
    weight_hh[0::2, 1] = 0.0  # hidden 2: rows 0, 2, 4, 6 are unit 0 of the input, forget, cell and output gates
    return [x, state, weight_ih, weight_hh, *biases]


def _lstm_hidden_of_one(args: list) -> list:
    x, (h, c), weight_ih, weight_hh, bias_ih, bias_hh = args
    return [x, (h[:, :1], c[:, :1]), weight_ih[0::2], weight_hh[0::2, :1], bias_ih[0::2], bias_hh[0::2]]


def _lstm_unit_kept(results: tuple) -> tuple:
    return results[0][:, :1], results[1][:, :1]


LSTM_ONE_ROW = "x is (batch, input) and h, c are (batch, hidden), and a batch may hold a single row"
LSTM_FLOAT64 = "as nn.LSTMCell does, lstm_step takes any floating dtype, and its state keeps the input's"
LSTM_ORDINARY = LstmCase(3, 4, 5, seed=30)
LSTM_HIDDEN_OF_TWO = LstmCase(3, 4, 2, seed=31)
LSTM_LEGAL = Legal(LSTM, variants.of("lstm_step"), reference.lstm_step, ("h", "c"), _lstm_described, frozenset())


def check_lstm_step_legal_inputs(student) -> None:
    """Every legal input is taken as the others are: a batch of one row, a hidden size of 1, float64 (whose
    states stay float64), each judged against the student's own results on the ordinary input it is cut from."""
    ordinary, of_two = LSTM_ORDINARY.inputs(), _lstm_unit_zero(LSTM_HIDDEN_OF_TWO.inputs())
    edges = [
        (ordinary, Edge("a batch of one row", LSTM_ONE_ROW, _lstm_one_row, _lstm_row_kept)),
        (of_two, Edge("a hidden size of 1", SIZE_OF_ONE, _lstm_hidden_of_one, _lstm_unit_kept)),
        (ordinary, Edge("a float64 input", LSTM_FLOAT64, _float64, _same_results)),
    ]
    _judge_legal(student, LSTM_LEGAL, edges)

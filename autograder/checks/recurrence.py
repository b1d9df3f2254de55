"""Checks for TODO 1 (rnn_forward) and TODO 2 (lstm_step).

The values items compare with the reference; the aspect items judge their aspect alone, on the
student's own outputs: `writes_the_loop` / `writes_the_step` (no recurrent layer called, the
documented shapes, states computed from the input), `initial_state` (h0 is where the recurrence
starts, and a run continued from its own state continues it) and `gradients` (the derivatives of
the student's own output, reaching every input).
"""

import re
from collections.abc import Callable
from dataclasses import dataclass

import torch

from autograder.checks import gradients, variants
from autograder.checks.compare import (
    ATOL,
    RTOL,
    CheckFailure,
    Comparison,
    Suspects,
    expect_pair,
    expect_tensor,
    fail,
    untouched,
    verdict_then,
    with_diagnosis,
)
from autograder.checks.inputs import normal
from autograder.student import Raised
from solutions import recurrence as reference


@dataclass(frozen=True)
class RnnCase:
    batch: int
    length: int
    size: int  # input features
    hidden: int
    seed: int
    dtype: torch.dtype = torch.float32  # the contract allows any floating dtype: float64 too (R8)

    def inputs(self, with_h0: bool = False) -> list:
        return [None if a is None else a.to(self.dtype) for a in self._inputs(with_h0)]

    def _inputs(self, with_h0: bool) -> list:
        x = normal(self.batch, self.length, self.size, seed=self.seed)
        weights = [
            normal(self.hidden, self.size, seed=self.seed + 100, scale=0.6),
            normal(self.hidden, self.hidden, seed=self.seed + 200, scale=0.6),
            normal(self.hidden, seed=self.seed + 300, scale=0.5),
            normal(self.hidden, seed=self.seed + 400, scale=0.5),
        ]
        h0 = normal(1, self.batch, self.hidden, seed=self.seed + 500) if with_h0 else None
        return [x, *weights, h0]

    def context(self, with_h0: bool) -> str:
        kind = "" if self.dtype == torch.float32 else f" {str(self.dtype).removeprefix('torch.')}"
        return (
            f"x{kind} {self.batch}x{self.length}x{self.size}, hidden {self.hidden}, h0 {'given' if with_h0 else 'None'}"
        )

    def shortened(self, steps: int) -> "RnnCase":
        return RnnCase(self.batch, self.length - steps, self.size, self.hidden, self.seed, self.dtype)


RNN_CASES = [  # square and not, batch 1, length 1, batch == length
    RnnCase(batch=3, length=5, size=4, hidden=6, seed=0),
    RnnCase(batch=1, length=1, size=3, hidden=2, seed=1),
    RnnCase(batch=4, length=4, size=5, hidden=5, seed=2),
    RnnCase(batch=2, length=7, size=3, hidden=4, seed=3),
    RnnCase(batch=2, length=3, size=3, hidden=4, seed=8, dtype=torch.float64),  # R8: zeros made float32 break
]
SQUARE = RNN_CASES[2]  # batch == length and input == hidden: every known mistake runs on it (writes_the_loop)
# initial_state and gradients: input == hidden, so a weight left untransposed (R1) runs and they judge their aspect
STATE_CASES = [RnnCase(3, 5, 4, 4, 4), RnnCase(1, 1, 3, 3, 5), SQUARE, RnnCase(2, 7, 3, 3, 6)]
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


LSTM_CASES = [LstmCase(3, 4, 5, 0), LstmCase(1, 2, 3, 1), LstmCase(2, 6, 6, 2)]
LSTM_STATE = {"0": "x", "1.0": "the state's h", "1.1": "the state's c"}  # an argument's place -> its name
LSTM_INPUTS = {0: "x", 2: "weight_ih", 3: "weight_hh", 4: "bias_ih", 5: "bias_hh"}  # argument index -> name


def _shape_mistake(error: Raised, case: RnnCase) -> str | None:
    """R1 and R4 often show as a shape error rather than a wrong value (R1's from x @ weight_ih)."""
    message = error.error_message
    if error.error_type != "RuntimeError":
        return None
    if case.dtype != torch.float32 and re.search(r"dtype|Double|Float", message):
        return "R8"
    numbers = set(re.findall(r"\d+", message))
    lengths = {str(case.batch), str(case.length)}
    if "must match the size" in message and case.batch != case.length and lengths <= numbers:
        return "R4"
    if ("mat1 and mat2" in message or "size mismatch" in message) and case.size != case.hidden:
        return "R1:ih"
    return None


def _call_rnn(student, args: list, case: RnnCase, **options):
    """Call rnn_forward; name R1 or R4 when their shape error is what comes back."""
    try:
        return student.run("recurrence.rnn_forward", *args, **options)
    except Raised as error:
        mistake = _shape_mistake(error, case)
        if mistake is None:
            raise
        fail(with_diagnosis(mistake, f"rnn_forward raised {error.error_type}: {error.error_message.splitlines()[0]}"))


def _run_rnn(student, args: list, case: RnnCase) -> tuple[torch.Tensor, torch.Tensor]:
    return _validated(_call_rnn(student, args, case).value, case)


def _validated(value, case: RnnCase) -> tuple[torch.Tensor, torch.Tensor]:
    """(output, h_n) if they are what the contract says: R4 and R7 named when the output is (length, batch, hidden)."""
    output, h_n = _own_layout(value, case)
    if output.shape != (case.batch, case.length, case.hidden):
        fail(with_diagnosis("R7", f"output has shape {tuple(output.shape)}; expected {_shapes(case)[0]}."))
    return output, h_n


def _shapes(case: RnnCase) -> tuple[tuple[int, ...], tuple[int, ...]]:
    return (case.batch, case.length, case.hidden), (1, case.batch, case.hidden)


def _own_layout(value, case: RnnCase) -> tuple[torch.Tensor, torch.Tensor]:
    """(output, h_n), the output (batch, length, hidden) or stacked on dim 0 (R7, for the output items to judge):
    the aspect items judge the states whatever the output's layout. An output (length, batch, hidden) whose h_n
    holds one state per step (not per row) is a loop over the batch (R4)."""
    expected_output, expected_h_n = _shapes(case)
    output, h_n = expect_pair(value, "rnn_forward", ("output", "h_n"))
    stacked_on_time = (case.length, case.batch, case.hidden)
    if type(output) is torch.Tensor and output.shape == stacked_on_time and stacked_on_time != expected_output:
        if type(h_n) is not torch.Tensor or h_n.shape != expected_h_n:
            fail(with_diagnosis("R4", f"output has shape {tuple(output.shape)}; expected {expected_output}."))
        return _tensor(output, "output", stacked_on_time, case), _tensor(h_n, "h_n", expected_h_n, case)
    return _tensor(output, "output", expected_output, case), _tensor(h_n, "h_n", expected_h_n, case)


def _tensor(value, what: str, shape: tuple[int, ...], case: RnnCase) -> torch.Tensor:
    """The tensor, of the input's dtype: float32 states from a float64 input are R8's zeros (cast down)."""
    if type(value) is torch.Tensor and value.dtype != case.dtype and value.shape == shape:
        fail(with_diagnosis("R8", f"{what} has dtype {value.dtype} for a {case.dtype} input ({case.context(False)})."))
    return expect_tensor(value, what, shape, case.dtype)


def _states(student, args: list, case: RnnCase, stacked_on_time: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(output, h_n) with the output read batch-first, in the layout the student's output showed (R7 or not);
    the caller's x and h0 left as given (L3: a state written into h0 changes where the caller starts)."""
    call = _call_rnn(student, args, case)
    _raised(untouched(call, "rnn_forward", RNN_PLACES))
    output, h_n = _own_layout(call.value, case)
    return (output.transpose(0, 1) if stacked_on_time else output), h_n


def _stacked_on_time(student) -> bool:
    """Whether the student's output is (length, batch, hidden) (R7), seen on a batch that is not as long as it is."""
    case = STATE_CASES[0]
    output, _ = _own_layout(_call_rnn(student, case.inputs(with_h0=True), case).value, case)
    return output.shape[0] == case.length


def _compare_rnn(student, which: str, with_h0: bool) -> None:
    comparison, later = Comparison("rnn_forward", time_axis={"output": 1}), None
    index = 0 if which == "output" else 1
    for case in RNN_CASES:
        args = case.inputs(with_h0=with_h0)
        try:
            call = _call_rnn(student, args, case)
            changed = untouched(call, "rnn_forward", RNN_PLACES)  # L3: said after the values, as R8 is
            later = later or changed
            got = _validated(call.value, case)[0] if which == "output" else _own_layout(call.value, case)[1]
        except CheckFailure as failure:
            if case.dtype == torch.float32:
                raise
            later = later or failure  # R8: said after the values, so that a mistake in them is named as well
            continue
        expected = reference.rnn_forward(*args)[index]
        suspects = Suspects(variants.RNN_FORWARD, lambda variant, args=args: variant(*_copied(args))[index])
        comparison.add(which, got, expected, case.context(with_h0), suspects)
    verdict_then(comparison, later)


def check_rnn_forward_output(student) -> None:
    """The state at every step equals nn.RNN's, starting from zeros."""
    _compare_rnn(student, "output", with_h0=False)


def check_rnn_forward_final_state(student) -> None:
    """h_n is the state after the last step, shaped (1, batch, hidden)."""
    _compare_rnn(student, "h_n", with_h0=False)


def _continued(function, args: list, steps: int) -> torch.Tensor:
    """`function` run on x[:, steps:] from its own state after step steps - 1 (the rest of its own run)."""
    output, _ = function(*args)
    return function(args[0][:, steps:], *args[1:5], output[:, steps - 1].unsqueeze(0))[0]


def check_rnn_forward_initial_state(student) -> None:
    """A given h0 is where the recurrence starts: it changes the states, and a run continued from its own
    state after a step continues it (judged on the student's own outputs, whatever their values)."""
    runs, stacked_on_time = [], _stacked_on_time(student)
    for case in STATE_CASES:
        args = case.inputs(with_h0=True)
        output, _ = _states(student, args, case, stacked_on_time)
        from_zeros, _ = _states(student, [*args[:5], None], case, stacked_on_time)
        if torch.allclose(output, from_zeros, atol=ATOL, rtol=RTOL):
            report = f"rnn_forward gives the same output with h0 given as with h0=None ({case.context(True)})."
            fail(with_diagnosis("R6", report))
        runs.append((case, args, output))
    comparison = Comparison("rnn_forward", time_axis={"output": 1})
    for case, args, output in (run for run in runs if run[0].length > 1):
        steps = case.length // 2
        shorter = case.shortened(steps)
        rest = [args[0][:, steps:], *args[1:5], output[:, steps - 1].unsqueeze(0)]
        got, _ = _states(student, rest, shorter, stacked_on_time)
        context = f"x[:, {steps}:] from your state after step {steps - 1}, against your output from step {steps} on"
        context += f"; x {case.batch}x{case.length}x{case.size}, hidden {case.hidden}"
        suspects = Suspects(variants.RNN_FORWARD, lambda variant, a=args, k=steps: _continued(variant, _copied(a), k))
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
        own = _own_layout(call.value, case)
        cotangents = [normal(*part.shape, seed=case.seed + 7 + number) for number, part in enumerate(own)]
        wrt = dict(enumerate(RNN_INPUTS))
        call = _grad_call(student, "recurrence.rnn_forward", args, list(wrt), cotangents, case)
        run = lambda shifted, case=case: _own_layout(_call_rnn(student, shifted, case).value, case)  # noqa: E731
        grads = gradients.returned(call.grads, len(wrt), "rnn_forward")
        gradients.judge("rnn_forward", _judged(run, args, wrt, grads, cotangents, case.seed), case.context(True))


def _grad_call(student, target: str, args: list, wrt: list, cotangents: list, case: RnnCase | None = None):
    try:
        if case is not None:
            return _call_rnn(student, args, case, grad=(wrt, cotangents))
        return student.run(target, *args, grad=(wrt, cotangents))
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
    output, _ = _validated(call.value, SQUARE)
    other, _ = _run_rnn(student, [normal(*args[0].shape, seed=SQUARE.seed + 50), *args[1:]], SQUARE)
    _depends_on_the_input(output, other, "rnn_forward", SQUARE.context(False))


# -- lstm_step -----------------------------------------------------------------------------
def _run_lstm(student, args: list, case: LstmCase) -> tuple[torch.Tensor, torch.Tensor]:
    return _lstm_pair(student.run("recurrence.lstm_step", *args).value, case)


def _lstm_pair(value, case: LstmCase) -> tuple[torch.Tensor, torch.Tensor]:
    h, c = expect_pair(value, "lstm_step", ("h", "c"))
    return expect_tensor(h, "h", (case.batch, case.hidden)), expect_tensor(c, "c", (case.batch, case.hidden))


def _untouched(call, function: str, names: dict[str, str]) -> None:
    """The caller's tensors are as it passed them (the contract: a step returns new tensors)."""
    _raised(untouched(call, function, names, "L3"))


def _raised(failure: CheckFailure | None) -> None:
    if failure is not None:
        raise failure


def _copied(args: list) -> list:
    """The arguments as new tensors: a variant that writes into its inputs (L3) leaves the case's own alone."""
    return [tuple(a.clone() for a in arg) if type(arg) is tuple else _clone(arg) for arg in args]


def _clone(arg):
    return arg.clone() if isinstance(arg, torch.Tensor) else arg


def check_lstm_step_values(student) -> None:
    """The new (h, c) equal nn.LSTMCell's, and the caller's state is left as it was given."""
    comparison = Comparison("lstm_step")
    for case in LSTM_CASES:
        args = case.inputs()
        call = student.run("recurrence.lstm_step", *args)
        _untouched(call, "lstm_step", LSTM_STATE)
        got = _lstm_pair(call.value, case)
        expected = reference.lstm_step(*args)
        suspects = Suspects(variants.LSTM_STEP, lambda variant, args=args: variant(*_copied(args)))
        for index in (0, 1):
            part = suspects.part(lambda output, index=index: output[index])
            comparison.add("hc"[index], got[index], expected[index], case.context, part)
    comparison.verdict()


def check_lstm_step_gradients(student) -> None:
    """Gradients reach x and every weight, and are the derivatives of the step's own output."""
    for case in LSTM_CASES[:2]:
        args = case.inputs()
        call = student.run("recurrence.lstm_step", *args)  # a caller's c written into breaks its backward: L3
        _untouched(call, "lstm_step", LSTM_STATE)
        _lstm_pair(call.value, case)
        cotangents = [normal(case.batch, case.hidden, seed=case.seed + k) for k in (7, 8)]
        call = _grad_call(student, "recurrence.lstm_step", args, list(LSTM_INPUTS), cotangents)
        run = lambda shifted, case=case: _run_lstm(student, shifted, case)  # noqa: E731
        grads = gradients.returned(call.grads, len(LSTM_INPUTS), "lstm_step")
        gradients.judge("lstm_step", _judged(run, args, LSTM_INPUTS, grads, cotangents, case.seed), case.context)


def check_lstm_step_writes_the_step(student) -> None:
    """The step is written by hand: nn.LSTMCell and friends are not called, and (h, c) come back shaped
    (batch, hidden), computed from the input."""
    case = LSTM_CASES[0]
    args = case.inputs()
    call = student.run("recurrence.lstm_step", *args)
    if call.layer_calls:
        fail(f"lstm_step calls {', '.join(call.layer_calls)}: the exercise is to write the gate arithmetic yourself.")
    h, _ = _lstm_pair(call.value, case)
    other, _ = _run_lstm(student, [normal(*args[0].shape, seed=case.seed + 50), *args[1:]], case)
    _depends_on_the_input(h, other, "lstm_step", case.context)

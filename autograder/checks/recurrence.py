"""Checks for TODO 1 (rnn_forward) and TODO 2 (lstm_step)."""

import re

import torch

from autograder.checks import variants
from autograder.checks.compare import Comparison, expect_pair, expect_tensor, fail, variant_outputs, with_diagnosis
from autograder.checks.inputs import normal
from autograder.student import Raised
from solutions import recurrence as reference

RNN_CASES = [  # batch, length, input, hidden, seed: square and not, batch 1, length 1, batch == length
    (3, 5, 4, 6, 0),
    (1, 1, 3, 2, 1),
    (4, 4, 5, 5, 2),
    (2, 7, 3, 4, 3),
]
LSTM_CASES = [(3, 4, 5, 0), (1, 2, 3, 1), (2, 6, 6, 2)]  # batch, input, hidden, seed


def rnn_inputs(batch: int, length: int, size: int, hidden: int, seed: int, with_h0: bool = False) -> list:
    x = normal(batch, length, size, seed=seed)
    weights = [
        normal(hidden, size, seed=seed + 100, scale=0.6),
        normal(hidden, hidden, seed=seed + 200, scale=0.6),
        normal(hidden, seed=seed + 300, scale=0.5),
        normal(hidden, seed=seed + 400, scale=0.5),
    ]
    h0 = normal(1, batch, hidden, seed=seed + 500) if with_h0 else None
    return [x, *weights, h0]


def _shape_mistake(error: Raised, batch: int, length: int, size: int, hidden: int) -> str | None:
    """R1 and R4 often show as a shape error rather than a wrong value (R1's from x @ weight_ih)."""
    message = error.error_message
    if error.error_type != "RuntimeError":
        return None
    numbers = set(re.findall(r"\d+", message))
    if "must match the size" in message and batch != length and {str(batch), str(length)} <= numbers:
        return "R4"
    if ("mat1 and mat2" in message or "size mismatch" in message) and size != hidden:
        return "R1:ih"
    return None


def _call_rnn(student, args: list, case: tuple, **options):
    """Call rnn_forward; name R1 or R4 when their shape error is what comes back."""
    batch, length, size, hidden, _ = case
    try:
        return student.run("recurrence.rnn_forward", *args, **options)
    except Raised as error:
        mistake = _shape_mistake(error, batch, length, size, hidden)
        if mistake is None:
            raise
        fail(with_diagnosis(mistake, f"rnn_forward raised {error.error_type}: {error.error_message.splitlines()[0]}"))


def _run_rnn(student, args: list, case: tuple) -> tuple[torch.Tensor, torch.Tensor]:
    batch, length, _, hidden, _ = case
    output, h_n = expect_pair(_call_rnn(student, args, case).value, "rnn_forward", ("output", "h_n"))
    if type(output) is torch.Tensor and output.shape == (length, batch, hidden) and batch != length:
        fail(with_diagnosis("R4", f"output has shape {tuple(output.shape)}; expected {(batch, length, hidden)}."))
    output = expect_tensor(output, "output", (batch, length, hidden))
    h_n = expect_tensor(h_n, "h_n", (1, batch, hidden))
    return output, h_n


def _context(case: tuple, with_h0: bool) -> str:
    batch, length, size, hidden, _ = case
    return f"x {batch}x{length}x{size}, hidden {hidden}, h0 {'given' if with_h0 else 'None'}"


def _compare_rnn(student, which: str, with_h0: bool) -> None:
    comparison = Comparison("rnn_forward", time_axis={"output": 1})
    for case in RNN_CASES:
        args = rnn_inputs(*case, with_h0=with_h0)
        output, h_n = _run_rnn(student, args, case)
        expected = reference.rnn_forward(*args)
        mistakes = variant_outputs(variants.RNN_FORWARD, *args)
        index = 0 if which == "output" else 1
        got = output if which == "output" else h_n
        comparison.add(
            which,
            got,
            expected[index],
            _context(case, with_h0),
            {key: value[index] for key, value in mistakes.items()},
        )
    comparison.verdict()


def check_rnn_forward_output(student) -> None:
    """The state at every step equals nn.RNN's, starting from zeros."""
    _compare_rnn(student, "output", with_h0=False)


def check_rnn_forward_final_state(student) -> None:
    """h_n is the state after the last step, shaped (1, batch, hidden)."""
    _compare_rnn(student, "h_n", with_h0=False)


def check_rnn_forward_initial_state(student) -> None:
    """A given h0 is where the recurrence starts."""
    _compare_rnn(student, "output", with_h0=True)
    _compare_rnn(student, "h_n", with_h0=True)


GRAD_NAMES = ("x", "weight_ih", "weight_hh", "bias_ih", "bias_hh", "h0")


def check_rnn_forward_gradients(student) -> None:
    """Gradients flow back to x, h0 and every weight, and equal nn.RNN's."""
    for case in RNN_CASES[:3]:
        args = rnn_inputs(*case, with_h0=True)
        batch, length, _, hidden, seed = case
        cotangents = [normal(batch, length, hidden, seed=seed + 7), normal(1, batch, hidden, seed=seed + 8)]
        call = _grad_call(student, "recurrence.rnn_forward", args, list(range(6)), cotangents, case)
        expected = _reference_grads(reference.rnn_forward, args, range(6), cotangents)
        mistakes = _variant_grads(variants.RNN_FORWARD, args, range(6), cotangents)
        _compare_grads("rnn_forward", call.grads, expected, GRAD_NAMES, _context(case, True), mistakes)


def _grad_call(student, target: str, args: list, wrt: list, cotangents: list, case: tuple | None = None):
    try:
        if case is not None:
            return _call_rnn(student, args, case, grad=(wrt, cotangents))
        return student.run(target, *args, grad=(wrt, cotangents))
    except Raised as error:
        if error.error_type == "ValueError" and "gradient" in error.error_message:
            fail(f"{target.split('.')[-1]}: {error.error_message}.")
        raise


def _reference_grads(function, args: list, wrt, cotangents: list) -> list[torch.Tensor]:
    args = [
        a.detach().clone().requires_grad_(i in wrt) if isinstance(a, torch.Tensor) else a for i, a in enumerate(args)
    ]
    outputs = function(*args)
    sum((o * c).sum() for o, c in zip(outputs, cotangents, strict=True)).backward()
    return [args[i].grad for i in wrt]


def _variant_grads(table: dict, args: list, wrt, cotangents: list) -> dict[str, list[torch.Tensor]]:
    grads = {}
    for key, variant in table.items():
        try:
            grads[key] = _reference_grads(variant, args, wrt, cotangents)
        except Exception:
            continue
    return grads


def _compare_grads(function: str, got: list, expected: list, names, context: str, mistakes: dict) -> None:
    comparison = Comparison(function)
    for index, (name, g, e) in enumerate(zip(names, got, expected, strict=True)):
        if g is None:
            missing = f"{function}: no gradient reaches {name}: is it used, and not detached?"
            fail(with_diagnosis("R3" if function == "rnn_forward" and name.startswith("bias") else None, missing))
        variants_of = {key: grads[index] for key, grads in mistakes.items()}
        comparison.add(f"{name}.grad", expect_tensor(g, f"{name}.grad", e.shape), e, context, variants_of)
    comparison.verdict()


def check_rnn_forward_writes_the_loop(student) -> None:
    """The loop is written by hand: nn.RNN and friends are not called."""
    args = rnn_inputs(*RNN_CASES[0])
    call = _call_rnn(student, args, RNN_CASES[0])
    if call.layer_calls:
        fail(f"rnn_forward calls {', '.join(call.layer_calls)}: the exercise is to write the loop over time yourself.")
    check_rnn_forward_output(student)


# -- lstm_step -----------------------------------------------------------------------------
def lstm_inputs(batch: int, size: int, hidden: int, seed: int) -> list:
    return [
        normal(batch, size, seed=seed),
        (normal(batch, hidden, seed=seed + 1), normal(batch, hidden, seed=seed + 2)),
        normal(4 * hidden, size, seed=seed + 100, scale=0.6),
        normal(4 * hidden, hidden, seed=seed + 200, scale=0.6),
        normal(4 * hidden, seed=seed + 300, scale=0.5),
        normal(4 * hidden, seed=seed + 400, scale=0.5),
    ]


def check_lstm_step_values(student) -> None:
    """The new (h, c) equal nn.LSTMCell's."""
    comparison = Comparison("lstm_step")
    for batch, size, hidden, seed in LSTM_CASES:
        args = lstm_inputs(batch, size, hidden, seed)
        h, c = expect_pair(student.run("recurrence.lstm_step", *args).value, "lstm_step", ("h", "c"))
        expected = reference.lstm_step(*args)
        mistakes = variant_outputs(variants.LSTM_STEP, *args)
        context = f"x {batch}x{size}, hidden {hidden}"
        for index, (name, got) in enumerate((("c", c), ("h", h))[::-1]):
            got = expect_tensor(got, name, (batch, hidden))
            comparison.add(name, got, expected[index], context, {k: v[index] for k, v in mistakes.items()})
    comparison.verdict()


def check_lstm_step_gradients(student) -> None:
    """Gradients reach x and every weight, and equal nn.LSTMCell's."""
    for batch, size, hidden, seed in LSTM_CASES[:2]:
        args = lstm_inputs(batch, size, hidden, seed)
        cotangents = [normal(batch, hidden, seed=seed + 7), normal(batch, hidden, seed=seed + 8)]
        wrt = [0, 2, 3, 4, 5]
        call = _grad_call(student, "recurrence.lstm_step", args, wrt, cotangents)
        expected = _reference_grads(reference.lstm_step, args, wrt, cotangents)
        mistakes = _variant_grads(variants.LSTM_STEP, args, wrt, cotangents)
        names = ("x", "weight_ih", "weight_hh", "bias_ih", "bias_hh")
        _compare_grads("lstm_step", call.grads, expected, names, f"x {batch}x{size}, hidden {hidden}", mistakes)


def check_lstm_step_writes_the_step(student) -> None:
    """The step is written by hand: nn.LSTMCell and friends are not called."""
    call = student.run("recurrence.lstm_step", *lstm_inputs(*LSTM_CASES[0]))
    if call.layer_calls:
        fail(f"lstm_step calls {', '.join(call.layer_calls)}: the exercise is to write the gate arithmetic yourself.")
    check_lstm_step_values(student)

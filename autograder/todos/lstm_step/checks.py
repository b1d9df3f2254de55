"""The checks of lstm_step's items: its cases, and one check_lstm_step_<aspect> per item of its record.

`values` compares the new (h, c) with the reference's; the aspect items judge their aspect alone, on the student's own
outputs: `writes_the_step` (no recurrent cell called, (h, c) shaped (batch, hidden), computed from the input),
`gradients` (the derivatives of the student's own output, reaching x and every weight) and `legal_inputs` (a batch of
one row, a hidden size of 1, float64, each cut from an ordinary input and judged against what the student's own
function gives there: checks/edges.py). The other items use inputs every legal solution accepts (two rows or more, a
hidden size of two or more, float32). A mistake is named only when its variant gives what the student's function
gives on those inputs: its values, or the very error it raised (checks/calls.py).
"""

from dataclasses import dataclass

import torch

from autograder.checks import calls, gradients, variants
from autograder.checks.compare import (
    CheckFailure,
    Comparison,
    Suspects,
    depends_on_the_input,
    expect_pair,
    expect_tensor,
    fail,
    untouched,
    with_diagnosis,
)
from autograder.checks.edges import SIZE_OF_ONE, Edge, Legal, float64, judge_legal, same_results
from autograder.checks.inputs import normal
from solutions import recurrence as reference

LSTM = "recurrence.lstm_step"


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


def _lstm_pair(value, case: LstmCase, args: list) -> tuple[torch.Tensor, torch.Tensor]:
    """(h, c), each (batch, hidden); anything else fails, named when a known mistake gives the same."""
    try:
        h, c = expect_pair(value, "lstm_step", ("h", "c"))
        return expect_tensor(h, "h", (case.batch, case.hidden)), expect_tensor(c, "c", (case.batch, case.hidden))
    except CheckFailure as failure:
        report = f"{str(failure).rstrip('.')} ({case.context})."
        fail(with_diagnosis(calls.explained(variants.of("lstm_step"), value, args), report))


def _call_lstm(student, args: list, case: LstmCase):
    return calls.called(student, LSTM, variants.of("lstm_step"), args, case.context)


def _run_lstm(student, args: list, case: LstmCase) -> tuple[torch.Tensor, torch.Tensor]:
    return _lstm_pair(_call_lstm(student, args, case).value, case, args)


def _untouched(call, function: str, names: dict[str, str]) -> None:
    """The caller's tensors are as it passed them (the contract: a step returns new tensors)."""
    calls.raised(untouched(call, function, names, "L3"))


def check_lstm_step_values(student) -> None:
    """The new (h, c) equal nn.LSTMCell's, and the caller's state is left as it was given."""
    comparison = Comparison("lstm_step")
    for case in LSTM_CASES:
        args = case.inputs()
        call = _call_lstm(student, args, case)
        _untouched(call, "lstm_step", LSTM_STATE)
        got = _lstm_pair(call.value, case, args)
        expected = reference.lstm_step(*args)
        suspects = Suspects(variants.of("lstm_step"), lambda variant, args=args: variant(*calls.copied(args)))
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
        table = variants.of("lstm_step")
        call = calls.grad_call(student, LSTM, table, args, case.context, (list(LSTM_INPUTS), cotangents))
        run = lambda shifted, case=case: _run_lstm(student, shifted, case)  # noqa: E731
        grads = gradients.returned(call.grads, len(LSTM_INPUTS), "lstm_step")
        judged = gradients.judged_inputs(run, args, LSTM_INPUTS, grads, cotangents, case.seed)
        gradients.judge("lstm_step", judged, case.context)


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
    depends_on_the_input(h, other, "lstm_step", case.context)


# -- legal_inputs: the edges of the contract, each cut from an ordinary input ------------------------
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


def _lstm_described(args: list) -> str:
    x = args[0]
    kind = "" if x.dtype == torch.float32 else f" {str(x.dtype).removeprefix('torch.')}"
    return f"x{kind} {'x'.join(map(str, x.shape))}, hidden {args[3].shape[1]}"


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
        (ordinary, Edge("a float64 input", LSTM_FLOAT64, float64, same_results)),
    ]
    judge_legal(student, LSTM_LEGAL, edges)

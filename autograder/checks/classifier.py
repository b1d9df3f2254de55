"""Checks for TODO 9 (SequenceClassifier.forward) and TODO 10 (train_step).

`train_step: clipped norm` is judged on the student's own steps: what each step returns must be
the length of the step it took (SGD moves the parameters by lr times the gradient it uses), so a
mistake in the update (clipping after the step, no zero_grad) keeps it and only a wrong report loses it.
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass

import torch

from autograder.checks import findings, padding, variants
from autograder.checks.compare import (
    CheckFailure,
    Comparison,
    Suspects,
    describe_type,
    expect_shaped,
    expect_tensor,
    explaining,
    fail,
    untouched,
    verdict_then,
    with_diagnosis,
)
from autograder.checks.inputs import generator, seeded_module
from autograder.runtime.trusted import TinyClassifier
from autograder.student import Raised
from solutions import classifier as reference


@dataclass(frozen=True)
class FullRows:
    batch: int
    length: int
    seed: int


FULL = [FullRows(4, 8, 0), FullRows(5, 5, 1), FullRows(1, 3, 2)]  # batch == length shows C1 by value
PADDED = [[3, 8, 1, 5], [2, 2, 6], [4, 1, 4, 2, 3]]  # rows of length 1: C5 asks for index -1


@dataclass(frozen=True)
class ForwardCase:
    model: reference.SequenceClassifier
    tokens: torch.Tensor
    lengths: torch.Tensor | None
    context: str


def _model(cell: str, pooling: str, seed: int) -> reference.SequenceClassifier:
    return seeded_module(reference.SequenceClassifier, 10, 6, 7, cell, pooling, seed=seed)


def _tokens(rows: list[int], seed: int) -> torch.Tensor:
    tokens = torch.randint(1, 10, (len(rows), max(rows)), generator=generator(seed))
    return tokens.masked_fill(torch.arange(max(rows)).unsqueeze(0) >= torch.tensor(rows).unsqueeze(1), 0)


def _forward(variant, case: ForwardCase):
    """The variant on copies: one that writes into its inputs (L3) leaves the case's own alone."""
    lengths = None if case.lengths is None else case.lengths.clone()
    with torch.no_grad():
        return variant(case.model, case.tokens.clone(), lengths)


FORWARD_PLACES = {"1": "tokens", "2": "lengths"}  # an argument's place -> its name (L3; 0 is the model)


def _logits(student, case: ForwardCase, suspects: Suspects, changed: list[CheckFailure]) -> torch.Tensor:
    """The student's logits; `changed` gets the L3 failure when the call wrote into the caller's tokens or lengths."""
    try:
        call = student.run("classifier.SequenceClassifier.forward", case.model, case.tokens, case.lengths)
    except Raised as error:
        mistake = suspects.raising(f"{error.error_type}: {(error.error_message.splitlines() or [''])[0]}")
        if mistake is None:
            raise
        first = error.error_message.splitlines()[0] if error.error_message else ""
        fail(with_diagnosis(mistake, f"forward raised {error.error_type}: {first} ({case.context})."))
    if (failure := untouched(call, "forward", FORWARD_PLACES)) is not None:
        changed.append(failure)
    got, (batch, length) = call.value, case.tokens.shape
    if type(got) is torch.Tensor and got.shape == (length, 2) and batch != length:
        mistake = "C1" if case.model.pooling == "last" else "C1:pooled"  # the batch axis read as time
        fail(with_diagnosis(mistake, f"forward returned logits of shape {tuple(got.shape)}; expected ({batch}, 2)."))
    return expect_tensor(got, "logits", (batch, 2))


def _compare(student, cases: list[ForwardCase]) -> None:
    """The logits compared; the caller's tokens or lengths written into (L3) said after the values, a values
    mistake beside it."""
    comparison, changed = Comparison("SequenceClassifier.forward"), []
    for case in cases:
        suspects = Suspects(variants.CLASSIFIER_FORWARD, lambda variant, c=case: _forward(variant, c))
        got = _logits(student, case, suspects, changed)
        with torch.no_grad():
            expected = case.model(case.tokens, case.lengths)
        comparison.add("logits", got, expected, case.context, suspects)
    verdict_then(comparison, changed[0] if changed else None)


def _full_cases(poolings: tuple[str, ...]) -> list[ForwardCase]:
    cases = []
    for cell in ("rnn", "gru", "lstm"):
        for pooling in poolings:
            for rows in FULL:
                tokens = _tokens([rows.length] * rows.batch, rows.seed)
                context = f"cell {cell!r}, pooling {pooling!r}, tokens {rows.batch}x{rows.length}, lengths None"
                cases.append(ForwardCase(_model(cell, pooling, rows.seed), tokens, None, context))
    return cases


# the other TODOs' functions a forward may call, with the check of their own item and their TODO's number
HELPERS: dict[str, tuple[Callable[..., None], int]] = {
    "padding.gather_final": (padding.check_gather_final_values, 4),
    "padding.masked_mean": (padding.check_masked_mean_values, 5),
}


class _StandingIn:
    """The student, every call made with the named functions of other TODOs replaced by correct ones."""

    def __init__(self, student, names: tuple[str, ...]) -> None:
        self.student, self.names = student, names

    def run(self, target: str, *args, **kwargs):
        return self.student.run(target, *args, standins=self.names, **kwargs)

    def __getattr__(self, name: str):
        return getattr(self.student, name)


def _with_standins(check: Callable[[object], None], student, names: tuple[str, ...]) -> None:
    """`check` with the named functions standing in, in a worker of its own, ended after it: the stand-ins' values
    come from the grader (runtime/standins.py, asked by runtime/proxies.py), and the worker dies after it."""
    student.fresh()
    try:
        check(_StandingIn(student, names))
    finally:
        student.fresh()


def _wrong_helpers(student) -> dict[str, str]:
    """The other TODOs' functions that fail their own item: name -> what their item says, first line."""
    wrong = {}
    for name, (check, _) in HELPERS.items():
        try:
            with findings.recording():  # what it names is its own item's: not this item's tags
                check(student)
        except (CheckFailure, Raised) as failure:
            wrong[name] = (str(failure).splitlines() or [""])[0]
    return wrong


def _own_code(check: Callable[[object], None]) -> Callable[[object], None]:
    """The item judged on forward's own code: when it fails and a function of another TODO that forward may call
    fails its own item, the item is graded again with a correct one in its place, and keeps what that earns; the
    feedback names both. (The threshold items grade the whole pipeline on purpose: see rubric.toml.)"""

    @functools.wraps(check)
    def judged(student) -> None:
        with findings.recording() as found:  # what the first run names counts only if its verdict stands
            try:
                check(student)
                failure = None
            except (CheckFailure, Raised) as raised:
                failure = raised
        wrong = {} if failure is None else _wrong_helpers(student)
        if failure is None or not wrong:
            _name(found.mistakes)
            if failure is not None:
                raise failure
            return
        _again(check, student, wrong, failure, found.mistakes)

    return judged


def _name(mistakes: list[str]) -> None:
    for mistake in mistakes:
        findings.name_mistake(mistake)


def _again(check: Callable[[object], None], student, wrong: dict[str, str], first: Exception, named: list[str]) -> None:
    """The item with correct helpers: it passes, fails as before (forward does not use them: the first failure
    stands, alone), or fails otherwise (said in the grader's words, with the helpers' own failures)."""
    names = " and ".join(name.split(".")[1] for name in wrong)
    said = "\n".join(f"  {name.split('.')[1]} (TODO {HELPERS[name][1]}): {text}" for name, text in wrong.items())
    note = f"Graded again with a correct {names} in place of yours, which fails its own item:\n{said}"
    try:
        _with_standins(check, student, tuple(wrong))
        findings.note(_given(check, wrong))
    except CheckFailure as own:
        if type(first) is CheckFailure and str(own) == str(first):
            _name(named)
            raise first from None
        fail(f"{own}\n{note}")
    except Raised as own:
        if type(first) is Raised and str(own) == str(first):
            _name(named)
            raise first from None
        fail(f"forward raised {_kind(own.error_type)}.\n{note}")


def _kind(error_type: str) -> str:
    """The exception's class name, where it is a plain name: the regrade's feedback is the grader's own words (what
    the student's code says while correct helpers stand in is not shown)."""
    plain = error_type.isascii() and all(part.isidentifier() for part in error_type.split(".")) and len(error_type) < 80
    return error_type if plain else "an exception"


def _given(check: Callable[[object], None], wrong: dict[str, str]) -> str:
    """A passing regrade's note: forward is right given correct helpers, which the student's are not."""
    names = " and ".join(f"a correct {name.split('.')[1]}" for name in wrong)
    said = "; ".join(f"{name.split('.')[1]} (TODO {HELPERS[name][1]}): {text}" for name, text in wrong.items())
    what = (check.__doc__ or "forward").strip().splitlines()[0].rstrip(".")
    return f"Your forward is right given {names} ({what}); yours is not, fix it: {said}"


@_own_code
def check_SequenceClassifier_last_pooling(student) -> None:
    """Full-length rows: the head reads the state after the last step (rnn, gru, lstm)."""
    _compare(student, _full_cases(("last",)))


@_own_code
def check_SequenceClassifier_mean_max_pooling(student) -> None:
    """Full-length rows: mean and max pooling over time."""
    _compare(student, _full_cases(("mean", "max")))


@_own_code
def check_SequenceClassifier_padded_batch(student) -> None:
    """A padded batch with lengths: every pooling covers each row's real steps only."""
    cases = []
    for seed, rows in enumerate(PADDED):
        for pooling in ("last", "mean", "max"):
            context = f"cell 'lstm', pooling {pooling!r}, lengths {rows}"
            cases.append(ForwardCase(_model("lstm", pooling, seed), _tokens(rows, seed), torch.tensor(rows), context))
    _compare(student, cases)


# -- train_step ------------------------------------------------------------------------------
LEARNING_RATE = 0.5  # plain SGD: each step moves the parameters by exactly this times the gradient used
ROWS = [7, 3, 5, 1, 6, 7]


@dataclass(frozen=True)
class StepCase:
    """Steps in a row on one model: the clip ("default": train_step's own default, 1.0), and the gradients
    left in the model before the first step (None: none)."""

    clip: float | str | None
    seed: int
    steps: int
    stale: float | None

    @property
    def extra(self) -> tuple[float | None, ...]:
        return () if self.clip == "default" else (self.clip,)

    @property
    def context(self) -> str:
        shown = f"clip {1.0 if self.clip == 'default' else self.clip}, {self.steps} step"
        shown += "s in a row" if self.steps > 1 else ""
        return shown + (f", gradients left at {self.stale} before the first" if self.stale is not None else "")


STEP_CASES = [StepCase(None, 1, 2, 0.5), StepCase(0.05, 0, 3, None), StepCase("default", 2, 3, None)]
STEP_CASES += [StepCase(0.5, 3, 1, 0.5)]


@dataclass(frozen=True)
class Steps:
    """The student's steps on one case and what the reference and each known mistake do on it."""

    case: StepCase
    start: dict[str, torch.Tensor]  # the parameters before the first step
    returned: list  # what each of the student's steps returned
    after: list[dict[str, torch.Tensor]]  # the parameters after each of the student's steps
    final: dict[str, torch.Tensor]  # the student's model's state after the last step
    expected: tuple[list[float], dict[str, torch.Tensor]]  # the reference's norms and final state
    suspects: Suspects  # each known mistake's (norms, final state)


def _fresh(seed: int) -> TinyClassifier:
    return seeded_module(TinyClassifier, 10, 8, 16, seed=seed)


def _batches(seed: int, steps: int) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    labels = [torch.randint(0, 2, (len(ROWS),), generator=generator(seed + 100 * step + 1)) for step in range(steps)]
    return [(_tokens(ROWS, seed + 100 * step), torch.tensor(ROWS), labels[step]) for step in range(steps)]


def _replayed(function, case: StepCase) -> tuple[list[float], dict[str, torch.Tensor]]:
    """`function`'s steps on its own copy of the case's model: what each returned, and the final state."""
    model = _fresh(case.seed)
    if case.stale is not None:
        for parameter in model.parameters():
            parameter.grad = torch.full_like(parameter, case.stale)
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    returned = [function(model, batch, optimizer, *case.extra) for batch in _batches(case.seed, case.steps)]
    return returned, model.state_dict()


def _steps(student, case: StepCase) -> Steps:
    """The student's steps and the reference's (and each variant's), each on its own copy of one model."""
    model = _fresh(case.seed)
    start = {name: p.detach().clone() for name, p in model.named_parameters()}
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    call = student.run("harness.train_steps", model, _batches(case.seed, case.steps), optimizer, case.extra, case.stale)
    answered = _answered_steps(call.value, case.steps, start)
    returned = [value for value, _ in answered]
    after = [state for _, state in answered]
    suspects = Suspects(variants.TRAIN_STEP, lambda variant, c=case: _replayed(variant, c))
    return Steps(case, start, returned, after, model.state_dict(), _replayed(reference.train_step, case), suspects)


def _answered_steps(value, steps: int, start: dict[str, torch.Tensor]) -> list:
    """The grader's run of train_step as it came back, if it is `steps` pairs (what a step returned, the parameters
    after it), each state of the model's own parameters: each made sure of before the step's length is measured."""
    pairs = type(value) is list and all(type(step) is tuple and len(step) == 2 for step in value)
    if not pairs or len(value) != steps:
        fail(f"The grader's run of train_step came back as {describe_type(value)}; expected {steps} steps.")
    for _, state in value:
        if type(state) is not dict or state.keys() != start.keys():
            shown = sorted(state)[:6] if type(state) is dict else describe_type(state)
            fail(f"The grader's run of train_step left the parameters {shown}; expected {', '.join(start)}.")
        for name, tensor in state.items():
            expect_shaped(tensor, f"the parameter {name} after a step", start[name].shape, start[name].dtype)
    return value


def check_train_step_update(student) -> None:
    """After steps in a row on one model the parameters equal SGD on each step's own clipped gradient."""
    comparison = Comparison("train_step")
    for case in STEP_CASES:
        steps = _steps(student, case)
        for name, value in steps.final.items():
            part = steps.suspects.part(lambda outcome, name=name: outcome[1][name])
            comparison.add(f"updated {name}", value, steps.expected[1][name], case.context, part)
    comparison.verdict()


def _close(got: float, norm: float) -> bool:
    return abs(got - norm) <= 1e-3 * max(1e-3, abs(norm))


def _taken(steps: Steps) -> list[float]:
    """The norm of the gradient each of the student's steps applied: how far it moved the parameters, over lr."""
    taken, before = [], steps.start
    for after in steps.after:
        moved = torch.stack([(after[name] - before[name]).norm() for name in before])
        taken.append(float(torch.linalg.vector_norm(moved)) / LEARNING_RATE)
        before = after
    return taken


def check_train_step_clipped_norm(student) -> None:
    """Each step returns, as a float, the total norm of the gradient it applied: after clipping, the length of
    the step it took over the learning rate (judged on the student's own steps, whatever the update)."""
    runs = [_steps(student, case) for case in STEP_CASES]
    for steps in runs:
        wrong = [value for value in steps.returned if type(value) not in (float, int)]
        if wrong:
            fail(f"train_step returned {type(wrong[0]).__name__}; expected a Python float (use float(norm)).")
    for steps in runs:
        for number, (value, taken) in enumerate(zip(steps.returned, _taken(steps), strict=True)):
            if _close(value, taken):
                continue
            cases = [(run.returned, run.suspects.part(lambda outcome: outcome[0])) for run in runs]
            mistake = explaining(cases, lambda got, norms: norms is not None and all(map(_close, got, norms)))
            which = f"step {number + 1} of {steps.case.steps}" if steps.case.steps > 1 else "the step"
            report = (
                f"train_step returned {value:.6f} at {which}, but the step it took is lr x {taken:.6f}: "
                f"report the norm of the gradient actually applied ({steps.case.context})."
            )
            fail(with_diagnosis(mistake, report))

"""Checks for TODO 9 (SequenceClassifier.forward) and TODO 10 (train_step).

Each function's legal domain (forward: a batch of one row, rows of length 1, lengths left out; train_step:
clip=None, a batch of one row) is graded by its `legal_inputs` item alone, and only where the function is right on
an ordinary input asking the same: refusing or mishandling a legal input costs that item, and a mistake that shows
on ordinary inputs costs the other items only. The other items use inputs every legal variant takes.

`train_step: clipped norm` is judged on the student's own steps: what each step returns must be
the length of the step it took (SGD moves the parameters by lr times the gradient it uses), so a
mistake in the update (clipping after the step, no zero_grad) keeps it and only a wrong report loses it.
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from autograder import stubs
from autograder.checks import findings, padding, variants
from autograder.checks.compare import (
    ATOL,
    RTOL,
    CheckFailure,
    Comparison,
    Suspects,
    describe_type,
    expect_shaped,
    expect_tensor,
    explaining,
    fail,
    mismatch_report,
    unexplained_ordinary,
    untouched,
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


# The value items' batches: several rows, each at least two steps long, lengths given. The legal domain (a batch
# of one row, rows of length 1, lengths left out) is legal_inputs' alone, so refusing it costs that item only.
FULL = [FullRows(4, 8, 0), FullRows(5, 5, 1), FullRows(2, 3, 2)]  # batch == length shows C1 by value
PADDED = [[3, 8, 2, 5], [2, 2, 6], [4, 2, 4, 7, 3]]
POOLINGS = reference.POOLINGS


@dataclass(frozen=True)
class ForwardCase:
    model: reference.SequenceClassifier
    tokens: torch.Tensor
    lengths: torch.Tensor | None
    context: str


@dataclass(frozen=True)
class Unrun:
    """A case whose logits could not be compared: what happened, and the mistake whose variant does the same."""

    mistake: str | None
    report: str
    raised: Raised | None = None  # the student's own exception, when no mistake explains it


def _model(cell: str, pooling: str, seed: int) -> reference.SequenceClassifier:
    return seeded_module(reference.SequenceClassifier, 10, 6, 7, cell, pooling, seed=seed)


def _tokens(rows: list[int], seed: int) -> torch.Tensor:
    tokens = torch.randint(1, 10, (len(rows), max(rows)), generator=generator(seed))
    return tokens.masked_fill(torch.arange(max(rows)).unsqueeze(0) >= torch.tensor(rows).unsqueeze(1), 0)


def _case(model: reference.SequenceClassifier, tokens: torch.Tensor, lengths: list[int] | None) -> ForwardCase:
    """A case on `tokens`, its context saying the cell, the pooling, the tokens' shape and the lengths given."""
    cell = type(model.rnn).__name__.lower()
    context = f"cell {cell!r}, pooling {model.pooling!r}, tokens {tokens.shape[0]}x{tokens.shape[1]}, lengths {lengths}"
    return ForwardCase(model, tokens, None if lengths is None else torch.tensor(lengths), context)


def _forward(variant, case: ForwardCase):
    """The variant on copies: one that writes into its inputs (L3) leaves the case's own alone."""
    lengths = None if case.lengths is None else case.lengths.clone()
    with torch.no_grad():
        return variant(case.model, case.tokens.clone(), lengths)


def _expected(case: ForwardCase) -> torch.Tensor:
    with torch.no_grad():
        return case.model(case.tokens, case.lengths)


FORWARD_PLACES = {"1": "tokens", "2": "lengths"}  # an argument's place -> its name (L3; 0 is the model)


def _call(student, case: ForwardCase):
    return student.run("classifier.SequenceClassifier.forward", case.model, case.tokens, case.lengths)


def _same_values(got, variant) -> bool:
    return (
        type(got) is torch.Tensor
        and type(variant) is torch.Tensor
        and got.shape == variant.shape
        and got.dtype == variant.dtype
        and bool(torch.allclose(got, variant, atol=ATOL, rtol=RTOL))
    )


def _logits(student, case: ForwardCase, suspects: Suspects):
    """The student's logits and the call, or an `Unrun` (and no call) when they cannot be compared: it raised, or
    returned what is not (batch, 2) float32 logits; named when a known mistake's variant does the same here."""
    try:
        call = _call(student, case)
    except Raised as error:
        first = (error.error_message.splitlines() or [""])[0]
        mistake = suspects.raising(f"{error.error_type}: {first}")
        report = f"forward raised {error.error_type}: {first} ({case.context})."
        return Unrun(mistake, report, None if mistake else error), None
    got, batch = call.value, case.tokens.shape[0]
    try:
        return expect_tensor(got, "logits", (batch, 2)), call
    except CheckFailure as failure:
        mistake = explaining([(got, suspects)], _same_values)
        shape = f"logits of shape {tuple(got.shape)}" if type(got) is torch.Tensor else describe_type(got)
        plain = f"{str(failure).rstrip('.')} ({case.context})."
        report = f"forward returned {shape}; expected ({batch}, 2) ({case.context})." if mistake else plain
        return Unrun(mistake, report), call


def _compare(student, cases: list[ForwardCase], in_place: bool = False) -> None:
    """The logits compared. Cases that cannot be compared (a raise, a wrong shape) do not stop the others: every
    mistake is named from the cases that ran. With `in_place`, the caller's tokens or lengths written into (L3) is
    said after the values."""
    comparison, unrun, changed, compared = Comparison("SequenceClassifier.forward"), [], [], []
    for case in cases:
        suspects = Suspects(variants.of("SequenceClassifier"), lambda variant, c=case: _forward(variant, c))
        got, call = _logits(student, case, suspects)
        if in_place and call is not None and (failure := untouched(call, "forward", FORWARD_PLACES)) is not None:
            changed.append(failure)
        if isinstance(got, Unrun):
            unrun.append(got)
            continue
        expected = _expected(case)
        comparison.add("logits", got, expected, case.context, suspects)
        compared.append((got, expected, case.context))
    _verdict(comparison, compared, unrun, changed[0] if changed else None)


def _verdict(comparison: Comparison, compared: list, unrun: list[Unrun], later: CheckFailure | None) -> None:
    """One failure naming every mistake found: those of the cases that did not run, the comparison's, then L3."""
    reports = (mismatch_report("logits", got, expected, None, context) for got, expected, context in compared)
    mismatch = next(filter(None, reports), None)
    keys = [run.mistake for run in unrun if run.mistake] + ([comparison.diagnosis()] if mismatch else [])
    mistake = _one_key_per_id([key for key in keys if key])
    if not mistake and (raised := next((run.raised for run in unrun if run.raised), None)) is not None:
        raise raised  # nothing named: the student's own exception, as it reads
    lines = _reports(unrun) + ([mismatch] if mismatch else [])
    if not lines:
        if later is not None:
            raise later
        return
    text = with_diagnosis(mistake, "\n".join(lines))
    fail(text if later is None else f"{text}\n{later}")


def _one_key_per_id(keys: list[str]) -> str | None:
    """The keys' parts joined ("C1+C3"), one form per catalogue id: each mistake named once."""
    parts: dict[str, str] = {}
    for key in keys:
        for part in key.split("+"):
            parts.setdefault(part.partition(":")[0], part)
    return "+".join(parts.values()) or None


def _reports(unrun: list[Unrun]) -> list[str]:
    """A line for the first case each mistake (or no mistake) left uncompared."""
    firsts: dict[str | None, str] = {}
    for run in unrun:
        firsts.setdefault(run.mistake, run.report)
    return list(firsts.values())


def _full_cases(poolings: tuple[str, ...]) -> list[ForwardCase]:
    cases = []
    for cell in ("rnn", "gru", "lstm"):
        for pooling in poolings:
            for rows in FULL:
                tokens = _tokens([rows.length] * rows.batch, rows.seed)
                cases.append(_case(_model(cell, pooling, rows.seed), tokens, [rows.length] * rows.batch))
    return cases


# the other TODOs' functions a forward may call, each with the check of its own item
HELPERS = ("padding.gather_final", "padding.masked_mean")


@functools.cache
def _todo(name: str) -> int:
    """The number of the TODO that fills in `name` ("padding.masked_mean"), as the generator numbers them."""
    return next(todo.number for todo in stubs.todos() if f"{todo.module}.{todo.function}" == name)


def _own_checks(name: str) -> list[Callable[..., None]]:
    """The checks of every item of one of those functions (its values, its legal inputs...), as checks/padding.py
    names them: `check_<function>_<aspect>`."""
    prefix = f"check_{name.split('.')[1]}_"
    return [getattr(padding, check) for check in sorted(vars(padding)) if check.startswith(prefix)]


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
    for name in HELPERS:
        for check in _own_checks(name):
            try:
                with findings.recording():  # what it names is its own item's: not this item's tags
                    check(student)
            except (CheckFailure, Raised) as failure:
                wrong[name] = (str(failure).splitlines() or [""])[0]
                break
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
    said = "\n".join(f"  {name.split('.')[1]} (TODO {_todo(name)}): {text}" for name, text in wrong.items())
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
    said = "; ".join(f"{name.split('.')[1]} (TODO {_todo(name)}): {text}" for name, text in wrong.items())
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
        for pooling in POOLINGS:
            cases.append(_case(_model("lstm", pooling, seed), _tokens(rows, seed), rows))
    _compare(student, cases, in_place=True)


# -- SequenceClassifier: legal inputs ---------------------------------------------------------------
FORWARD_RULES = {  # each legal input of forward, and what its docstring says of it
    "a batch of one row": "a batch may hold a single row",
    "rows of length 1": "a row may be one step long (lengths run from 1 to max_length)",
    "lengths left out": "lengths=None means every row is full length",
}


@dataclass(frozen=True)
class LegalCase:
    """A legal input, and an ordinary batch asking the same that every legal forward takes: the legal input is
    judged only where forward is right on the ordinary one (a mistake there is the other items')."""

    kind: str  # a key of FORWARD_RULES (or STEP_RULES)
    legal: Any
    ordinary: Any


def _one_row(pooling: str) -> LegalCase:
    model, rows = _model("gru", pooling, 30), [5, 7, 3]
    tokens = _tokens(rows, 30)
    return LegalCase("a batch of one row", _case(model, tokens[:1], rows[:1]), _case(model, tokens, rows))


def _length_one(pooling: str) -> LegalCase:
    model, rows, legal = _model("lstm", pooling, 31), [4, 2, 6, 2], [4, 1, 6, 1]
    tokens = _tokens(rows, 31)
    cut = tokens.masked_fill(torch.arange(tokens.shape[1]).unsqueeze(0) >= torch.tensor(legal).unsqueeze(1), 0)
    return LegalCase("rows of length 1", _case(model, cut, legal), _case(model, tokens, rows))


def _steps_of_one(pooling: str) -> LegalCase:
    model, tokens = _model("rnn", pooling, 32), _tokens([2, 2, 2], 32)
    return LegalCase("rows of length 1", _case(model, tokens[:, :1], [1, 1, 1]), _case(model, tokens, [2, 2, 2]))


def _no_lengths(pooling: str) -> LegalCase:
    model, tokens = _model("lstm", pooling, 33), _tokens([6, 6, 6], 33)
    return LegalCase("lengths left out", _case(model, tokens, None), _case(model, tokens, [6, 6, 6]))


def _legal_cases() -> list[LegalCase]:
    return [make(pooling) for pooling in POOLINGS for make in (_one_row, _length_one, _steps_of_one, _no_lengths)]


def _right_on(student, case: ForwardCase) -> bool:
    """Whether forward gives the reference's logits on `case` (raising is not). Logits that are neither the
    reference's nor any known mistake's fail the legal item here: else a forward wrong on every batch, whatever
    it returns, would earn it by being judged nowhere."""
    try:
        got = _call(student, case).value
    except Raised:
        return False
    if _same_values(got, _expected(case)):
        return True
    suspects = Suspects(variants.of("SequenceClassifier"), lambda variant: _forward(variant, case))
    if explaining([(got, suspects)], _same_values) is None:
        fail(unexplained_ordinary("forward", case.context))
    return False


def _legal_failure(student, case: LegalCase) -> str | None:
    """What forward does wrong on the legal input, in teaching words, or None when it is right."""
    head = f"This input is legal: {case.kind} ({case.legal.context}): {FORWARD_RULES[case.kind]}."
    try:
        got = _call(student, case.legal).value
    except Raised as error:
        return f"{head}\nYour forward takes ordinary batches but refused this one:\n{error}"
    expected = _expected(case.legal)
    if _same_values(got, expected):
        return None
    shape = tuple(expected.shape)
    if type(got) is not torch.Tensor or got.dtype != expected.dtype or got.shape != expected.shape:
        wanted = f"expected a float32 tensor of shape {shape}{_lost_axes(got, shape)}"
        return f"{head}\nYour forward returned {describe_type(got)}; {wanted}."
    report = mismatch_report("logits", got, expected, None, case.legal.context)
    return f"{head}\nYour forward is right on an ordinary batch but not on this one:\n{report}"


def _lost_axes(got, shape: tuple[int, ...]) -> str:
    """A word on `.squeeze()`, only when what differs is exactly the axes of size 1 gone."""
    if type(got) is torch.Tensor and tuple(got.shape) == tuple(size for size in shape if size != 1):
        return (
            ".\nThe axis of size 1 is gone: a .squeeze() without a dimension drops every axis of size 1, the batch "
            "axis of a batch of one too. Name the axis to drop (.squeeze(1))"
        )
    return ""


def _first_per_kind(failures: list[tuple[str, str | None]]) -> None:
    """Fail with the first legal input that fails, saying which other kinds fail too."""
    found: dict[str, str] = {}
    for kind, failure in failures:
        if failure is not None:
            found.setdefault(kind, failure)
    if found:
        first, *others = found
        also = f"\nYour code also fails on legal inputs of another kind: {', '.join(others)}." if others else ""
        fail(found[first] + also)


@_own_code
def check_SequenceClassifier_legal_inputs(student) -> None:
    """Legal inputs: a batch of one row, rows of length 1, lengths left out, each judged where forward is right on
    an ordinary batch asking the same."""
    judged = [case for case in _legal_cases() if _right_on(student, case.ordinary)]
    _first_per_kind([(case.kind, _legal_failure(student, case)) for case in judged])


# -- train_step ------------------------------------------------------------------------------
LEARNING_RATE = 0.5  # plain SGD: each step moves the parameters by exactly this times the gradient used
ROWS = (7, 3, 5, 1, 6, 7)


@dataclass(frozen=True)
class StepCase:
    """Steps in a row on one model: the clip ("default": train_step's own default, 1.0), the gradients left in
    the model before the first step (None: none), each batch's rows (each row `repeat` times over: the same mean
    loss) and how much larger the model's embedding and head weights are made (larger gradients: a clip of 1.0
    bites)."""

    clip: float | str | None
    seed: int
    steps: int
    stale: float | None
    rows: tuple[int, ...] = ROWS
    repeat: int = 1
    scale: float = 1.0

    @property
    def extra(self) -> tuple[float | None, ...]:
        return () if self.clip == "default" else (self.clip,)

    @property
    def context(self) -> str:
        clip = "left to its default, 1.0" if self.clip == "default" else self.clip
        shown = f"clip {clip}, {self.steps} step" + ("s in a row" if self.steps > 1 else "")
        if self.rows != ROWS:
            count = len(self.rows) * self.repeat
            shown += f", a batch of {count} row{'s' if count > 1 else ''}"
        return shown + (f", gradients left at {self.stale} before the first" if self.stale is not None else "")


STEP_CASES = [
    StepCase(5.0, 1, 2, 0.5),  # a clip the fresh gradients never reach: what is left before the first step shows
    StepCase(0.05, 0, 3, None),
    StepCase("default", 2, 3, None, scale=5.0),  # gradients of norm 2.5 to 5: the default clip of 1.0 bites
    StepCase(0.5, 3, 1, 0.5),
]


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


def _fresh(case: StepCase) -> TinyClassifier:
    model = seeded_module(TinyClassifier, 10, 8, 16, seed=case.seed)
    with torch.no_grad():
        model.embedding.weight.mul_(case.scale)
        model.head.weight.mul_(case.scale)
    return model


def _batches(case: StepCase) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    seed, rows, times = case.seed, list(case.rows), case.repeat
    made = []
    for step in range(case.steps):
        labels = torch.randint(0, 2, (len(rows),), generator=generator(seed + 100 * step + 1))
        tokens = _tokens(rows, seed + 100 * step)
        made.append((tokens.repeat(times, 1), torch.tensor(rows).repeat(times), labels.repeat(times)))
    return made


def _replayed(function, case: StepCase) -> tuple[list[float], dict[str, torch.Tensor]]:
    """`function`'s steps on its own copy of the case's model: what each returned, and the final state."""
    model = _fresh(case)
    if case.stale is not None:
        for parameter in model.parameters():
            parameter.grad = torch.full_like(parameter, case.stale)
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    returned = [function(model, batch, optimizer, *case.extra) for batch in _batches(case)]
    return returned, model.state_dict()


def _steps(student, case: StepCase) -> Steps:
    """The student's steps and the reference's (and each variant's), each on its own copy of one model."""
    model = _fresh(case)
    start = {name: p.detach().clone() for name, p in model.named_parameters()}
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    call = student.run("harness.train_steps", model, _batches(case), optimizer, case.extra, case.stale)
    answered = _answered_steps(call.value, case.steps, start)
    returned = [value for value, _ in answered]
    after = [state for _, state in answered]
    suspects = Suspects(variants.of("train_step"), lambda variant, c=case: _replayed(variant, c))
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


# -- train_step: legal inputs ---------------------------------------------------------------------
STEP_RULES = {  # each legal input of train_step, and what its docstring says of it
    "clip=None": "clip=None skips the clipping, so the step uses the whole gradient",
    "a batch of one row": "a batch may hold a single row",
}
NEVER_REACHED = 1e6  # a clip far above any gradient norm here: the ordinary input that asks what clip=None asks
LEGAL_STEPS = [
    LegalCase("clip=None", StepCase(None, 4, 1, None, scale=10.0), StepCase(NEVER_REACHED, 4, 1, None, scale=10.0)),
    LegalCase(
        "a batch of one row",
        StepCase("default", 5, 2, None, rows=(6,)),
        StepCase("default", 5, 2, None, rows=(6,), repeat=2),  # the row twice over: the same mean loss
    ),
]


def _right_steps(steps: Steps) -> bool:
    """Whether the student's steps returned the reference's norms and left the reference's parameters."""
    norms, state = steps.expected
    returned = all(
        type(value) in (float, int) and _close(value, norm) for value, norm in zip(steps.returned, norms, strict=True)
    )
    return returned and all(_same_values(steps.final[name], value) for name, value in state.items())


def _ordinary_right(student, case: StepCase) -> bool:
    """Whether train_step takes the reference's steps on the ordinary case; steps that no known mistake takes
    either fail the legal item (see `_right_on`)."""
    try:
        steps = _steps(student, case)
    except (Raised, CheckFailure):
        return False
    if _right_steps(steps):
        return True
    if not _explained_steps(steps):
        fail(unexplained_ordinary("train_step", case.context))
    return False


def _explained_steps(steps: Steps) -> bool:
    """Whether a known mistake (or combination) leaves the model's parameters as the student's steps left them."""

    def matches(got: dict[str, torch.Tensor], known: Any) -> bool:
        return isinstance(known, dict) and all(_same_values(got[name], known.get(name)) for name in got)

    return explaining([(steps.final, steps.suspects.part(lambda outcome: outcome[1]))], matches) is not None


def _step_direction(after: dict[str, torch.Tensor], before: dict[str, torch.Tensor]) -> torch.Tensor:
    return torch.cat([(after[name] - before[name]).flatten() for name in before]).double()


def _clipped_anyway(steps: Steps) -> str | None:
    """With clip=None: a word on clipping only when the student's step is the whole gradient's, made shorter."""
    norms, state = steps.expected
    if steps.case.clip is not None or steps.case.steps != 1:
        return None
    taken, mine = _taken(steps)[0], _step_direction(steps.after[0], steps.start)
    theirs = _step_direction(state, steps.start)
    aligned = float(torch.nn.functional.cosine_similarity(mine, theirs, dim=0)) > 1 - 1e-6
    if not aligned or taken >= norms[0] * (1 - 1e-3):
        return None
    return (
        f"Your step was clipped to a norm of {taken:.4f}, while the whole gradient's norm is {norms[0]:.4f}: "
        "with clip=None, call no clipping at all (and report the whole norm)."
    )


def _steps_differ(steps: Steps) -> str:
    """Where the student's legal steps first differ from the reference's: a norm returned, or a parameter."""
    norms, state = steps.expected
    for number, (value, norm) in enumerate(zip(steps.returned, norms, strict=True)):
        if type(value) not in (float, int) or not _close(value, norm):
            shown = f"{value:.6f}" if type(value) in (float, int) else describe_type(value)
            return f"Step {number + 1} returned {shown}; expected {norm:.6f} ({steps.case.context})."
    for name, value in state.items():
        report = mismatch_report(f"updated {name}", steps.final[name], value, None, steps.case.context)
        if report is not None:
            return report
    return f"Your steps differ from the reference's ({steps.case.context})."


def _legal_step_failure(student, case: LegalCase) -> str | None:
    head = f"This input is legal: {case.kind} ({case.legal.context}): {STEP_RULES[case.kind]}."
    try:
        steps = _steps(student, case.legal)
    except Raised as error:
        return f"{head}\nYour train_step takes ordinary steps but refused this one:\n{error}"
    if _right_steps(steps):
        return None
    return f"{head}\n{_clipped_anyway(steps) or _steps_differ(steps)}"


def check_train_step_legal_inputs(student) -> None:
    """Legal inputs: clip=None and a batch of one row, each judged where train_step is right on the same steps with
    an ordinary input (a clip the gradients never reach, the row twice over)."""
    judged = [case for case in LEGAL_STEPS if _ordinary_right(student, case.ordinary)]
    _first_per_kind([(case.kind, _legal_step_failure(student, case)) for case in judged])

"""The checks of SequenceClassifier.forward's items: its batches, one check_SequenceClassifier_<aspect> per item.

Its legal domain (a batch of one row, rows of length 1, lengths left out) is graded by its `legal_inputs` item alone,
and only where forward is right on an ordinary batch asking the same (checks/paired.py): refusing or mishandling a
legal input costs that item, and a mistake that shows on ordinary inputs costs the other items only. The other items
use batches every legal variant takes.

The forward items judge forward's own code: when one fails and a function of another exercise that forward may call
(gather_final, masked_mean) fails its own item, the item is graded again with a correct one standing in (`_own_code`).
The threshold items (`learns_the_task`, `learns_padded_rows`) train the whole pipeline on purpose
(checks/thresholds.py).
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass

import torch

from autograder import stubs, todos
from autograder.checks import findings, thresholds, variants
from autograder.checks.compare import (
    CheckFailure,
    Comparison,
    Suspects,
    describe_type,
    expect_tensor,
    explaining,
    fail,
    mismatch_report,
    same_values,
    unexplained_ordinary,
    untouched,
    with_diagnosis,
)
from autograder.checks.inputs import padded_tokens, seeded_module
from autograder.checks.paired import LegalCase, first_per_kind
from autograder.rubric import Rubric
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
        mistake = explaining([(got, suspects)], same_values)
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
                tokens = padded_tokens([rows.length] * rows.batch, rows.seed)
                cases.append(_case(_model(cell, pooling, rows.seed), tokens, [rows.length] * rows.batch))
    return cases


# the other TODOs' functions a forward may call, each with the check of its own item
HELPERS = ("padding.gather_final", "padding.masked_mean")


@functools.cache
def _todo(name: str) -> int:
    """The number of the TODO that fills in `name` ("padding.masked_mean"), as the generator numbers them."""
    return next(todo.number for todo in stubs.todos() if f"{todo.module}.{todo.function}" == name)


def _own_checks(name: str) -> list[Callable[..., None]]:
    """The checks of every item of one of those functions (its values, its legal inputs...), as the hidden suite finds
    them (todos.check), in the order of their names."""
    found = todos.record(name.split(".")[1])
    return [todos.check(found.key, aspect) for aspect in sorted(found.points) if aspect not in found.thresholds]


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
            cases.append(_case(_model("lstm", pooling, seed), padded_tokens(rows, seed), rows))
    _compare(student, cases, in_place=True)


# -- SequenceClassifier: legal inputs ---------------------------------------------------------------
FORWARD_RULES = {  # each legal input of forward, and what its docstring says of it
    "a batch of one row": "a batch may hold a single row",
    "rows of length 1": "a row may be one step long (lengths run from 1 to max_length)",
    "lengths left out": "lengths=None means every row is full length",
}


def _one_row(pooling: str) -> LegalCase:
    model, rows = _model("gru", pooling, 30), [5, 7, 3]
    tokens = padded_tokens(rows, 30)
    return LegalCase("a batch of one row", _case(model, tokens[:1], rows[:1]), _case(model, tokens, rows))


def _length_one(pooling: str) -> LegalCase:
    model, rows, legal = _model("lstm", pooling, 31), [4, 2, 6, 2], [4, 1, 6, 1]
    tokens = padded_tokens(rows, 31)
    cut = tokens.masked_fill(torch.arange(tokens.shape[1]).unsqueeze(0) >= torch.tensor(legal).unsqueeze(1), 0)
    return LegalCase("rows of length 1", _case(model, cut, legal), _case(model, tokens, rows))


def _steps_of_one(pooling: str) -> LegalCase:
    model, tokens = _model("rnn", pooling, 32), padded_tokens([2, 2, 2], 32)
    return LegalCase("rows of length 1", _case(model, tokens[:, :1], [1, 1, 1]), _case(model, tokens, [2, 2, 2]))


def _no_lengths(pooling: str) -> LegalCase:
    model, tokens = _model("lstm", pooling, 33), padded_tokens([6, 6, 6], 33)
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
    if same_values(got, _expected(case)):
        return True
    suspects = Suspects(variants.of("SequenceClassifier"), lambda variant: _forward(variant, case))
    if explaining([(got, suspects)], same_values) is None:
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
    if same_values(got, expected):
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


@_own_code
def check_SequenceClassifier_legal_inputs(student) -> None:
    """Legal inputs: a batch of one row, rows of length 1, lengths left out, each judged where forward is right on
    an ordinary batch asking the same."""
    judged = [case for case in _legal_cases() if _right_on(student, case.ordinary)]
    first_per_kind([(case.kind, _legal_failure(student, case)) for case in judged])


# -- the threshold items: the whole pipeline trained by the grader's recipe --------------------------
def check_SequenceClassifier_learns_the_task(student, rubric: Rubric | None = None) -> None:
    """Trained by the grader's recipe, the classifier learns the length-8 'first digit again' task."""
    thresholds.verdict(thresholds.recipe_in(rubric, "SequenceClassifier", "learns_the_task"), student)


def check_SequenceClassifier_learns_padded_rows(student, rubric: Rubric | None = None) -> None:
    """Trained on padded rows of lengths 2-8, it classifies rows padded far beyond them."""
    thresholds.verdict(thresholds.recipe_in(rubric, "SequenceClassifier", "learns_padded_rows"), student)

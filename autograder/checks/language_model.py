"""Checks for TODO 7 (next_token_loss) and TODO 8 (sample).

`next_token_loss: gradients` is judged against the student's own loss (its central differences along
random directions of each parameter), and `sample: no grad` on the calls to the model alone: both keep
their points when only the values are wrong. Each function's `legal_inputs` alone judges the edges of
its legal domain (a batch of one row, two tokens a row, a model with no `head`; no steps, one step, a
temperature above 1, the start token 0), which the other items leave out: there the function must not
raise, and must give the reference's results, or a known mistake's (graded by the other items).
"""

import copy
from dataclasses import dataclass

import torch

from autograder.checks import gradients, variants
from autograder.checks.compare import (
    ATOL,
    RTOL,
    Comparison,
    Suspects,
    describe_type,
    expect_tensor,
    explaining,
    fail,
    mismatch_report,
    refused_legal_input,
    untouched,
    verdict_then,
    with_diagnosis,
)
from autograder.checks.inputs import generator, normal, seeded_module
from autograder.runtime.seeds import seed_cpu
from autograder.runtime.trusted import LanguageModel, TiedLanguageModel
from autograder.student import Raised
from solutions import language_model as reference


@dataclass(frozen=True)
class LossCase:
    batch: int
    length: int
    vocab: int
    seed: int


@dataclass(frozen=True)
class SampleCase:
    start: int
    steps: int
    temperature: float
    seed: int

    @property
    def shown(self) -> str:
        return f"start {self.start}, {self.steps} steps, temperature {self.temperature}"


@dataclass(frozen=True)
class LegalLoss:
    """An edge of next_token_loss's legal domain: the tokens, the model (a TiedLanguageModel, with no `head`, or
    the given model's layers) and why the docstring allows it."""

    case: LossCase
    rows: list[int] | None  # the real length of each row, padded with 0 and pad_id 0; None: full rows, pad_id None
    tied: bool
    why: str

    @property
    def pad_id(self) -> int | None:
        return None if self.rows is None else 0

    @property
    def shown(self) -> str:
        rows = "" if self.rows is None else f", row lengths {self.rows} padded with 0"
        model = "a model with no head" if self.tied else "a model of the given layers"
        return (
            f"tokens {self.case.batch}x{self.case.length}{rows}, pad_id {self.pad_id}, vocab {self.case.vocab}, {model}"
        )


LOSS_CASES = [LossCase(4, 9, 7, 0), LossCase(3, 6, 6, 2), LossCase(2, 7, 6, 3)]  # tokens from 0 up: 0 counts too
PADDED_LENGTHS = [[9, 5, 3, 7], [2, 6, 6], [4, 4]]
LEGAL_LOSSES = [
    LegalLoss(LossCase(1, 7, 6, 10), None, False, "a batch of one row is a batch"),
    LegalLoss(LossCase(3, 2, 5, 11), None, False, "length >= 2 is all the docstring asks: one target a row"),
    LegalLoss(LossCase(1, 2, 7, 12), None, False, "one row of two tokens has a single target: the mean is its loss"),
    LegalLoss(LossCase(1, 6, 6, 13), [4], False, "a padded batch of one row is a padded batch"),
    LegalLoss(
        LossCase(3, 6, 7, 14),
        None,
        True,
        "any module that returns (logits, state) is a model: read the vocabulary from logits.shape[-1]",
    ),
]
SAMPLE_CASES = [SampleCase(1, 12, 0.5, 0), SampleCase(3, 15, 1.0, 1), SampleCase(2, 10, 0.7, 2)]
LEGAL_SAMPLES = [
    (SampleCase(4, 0, 1.0, 10), "steps is a count, and 0 steps give [start] alone"),
    (SampleCase(5, 1, 0.8, 11), "one step gives [start, t1]"),
    (SampleCase(2, 10, 2.5, 12), "any temperature above 0 is, and one above 1 flattens the distribution"),
    (SampleCase(0, 8, 1.0, 13), "start is any token of the vocabulary, 0 too"),
]
WORKER_SEED = 0  # the worker seeds the global random state so before every call (runtime/harness.py)
SAMPLING_MODEL = (6, 8, 12)  # vocab, embed, hidden


def loss_model(vocab: int, seed: int) -> LanguageModel:
    return seeded_module(LanguageModel, vocab, 5, 8, seed=seed)


def _tokens(batch: int, length: int, vocab: int, seed: int, low: int = 1) -> torch.Tensor:
    return torch.randint(low, vocab, (batch, length), generator=generator(seed))


def _padded(rows: list[int], vocab: int, seed: int, length: int | None = None) -> torch.Tensor:
    """Rows of these real lengths padded with 0 up to `length` (the longest row's by default)."""
    length = max(rows) if length is None else length
    tokens = _tokens(len(rows), length, vocab, seed)
    return tokens.masked_fill(torch.arange(length).unsqueeze(0) >= torch.tensor(rows).unsqueeze(1), 0)


def _loss(student, model: LanguageModel, tokens: torch.Tensor, pad_id: int | None, changed: list | None = None):
    """The student's loss; `changed` gets the L3 failure when the call wrote into the caller's tokens."""
    try:
        call = student.run("language_model.next_token_loss", model, tokens, pad_id)
    except Raised as error:
        if "Expected target size" in error.error_message or "Expected input batch_size" in error.error_message:
            fail(with_diagnosis("S3", f"next_token_loss raised {error.error_type}: {error.error_message[:120]}"))
        raise
    if changed is not None and (failure := untouched(call, "next_token_loss", LOSS_PLACES)) is not None:
        changed.append(failure)
    return expect_tensor(call.value, "the loss", ())


LOSS_PLACES = {"1": "tokens"}  # an argument's place -> its name (L3)


def _no_grad_loss(variant, model, tokens, pad_id):
    with torch.no_grad():
        return variant(model, tokens, pad_id)


@dataclass(frozen=True)
class LossInput:
    model: LanguageModel
    tokens: torch.Tensor
    pad_id: int | None
    context: str


def _compare_losses(student, cases: list[LossInput]) -> None:
    """The losses compared; the caller's tokens written into (L3) said after the values, a values mistake beside it."""
    comparison, changed = Comparison("next_token_loss"), []
    for case in cases:
        got = _loss(student, case.model, case.tokens, case.pad_id, changed)
        with torch.no_grad():
            expected = reference.next_token_loss(case.model, case.tokens, case.pad_id)
        suspects = Suspects(
            variants.of("next_token_loss"), lambda v, c=case: _no_grad_loss(v, c.model, c.tokens.clone(), c.pad_id)
        )
        comparison.add("the loss", got, expected, case.context, suspects)
    verdict_then(comparison, changed[0] if changed else None)


def check_next_token_loss_values(student) -> None:
    """The mean cross-entropy of predicting tokens[:, 1:] from tokens[:, :-1]."""
    cases = []
    for case in LOSS_CASES:
        tokens = _tokens(case.batch, case.length, case.vocab, case.seed, low=0)
        context = f"tokens {case.batch}x{case.length}, vocab {case.vocab}, pad_id None"
        cases.append(LossInput(loss_model(case.vocab, case.seed), tokens, None, context))
    _compare_losses(student, cases)


def check_next_token_loss_padding(student) -> None:
    """Targets equal to pad_id are left out of the mean."""
    cases = []
    for seed, rows in enumerate(PADDED_LENGTHS):
        tokens = _padded(rows, 6, seed)
        cases.append(LossInput(loss_model(6, seed), tokens, 0, f"row lengths {rows} padded with 0, pad_id 0"))
    _compare_losses(student, cases)


def _moved(student, model: LanguageModel, tokens: torch.Tensor, name: str):
    """The student's loss with the model's parameter `name` moved by a tensor."""

    def loss(step: torch.Tensor) -> float:
        moved = copy.deepcopy(model)
        with torch.no_grad():
            dict(moved.named_parameters())[name].add_(step)
        return float(_loss(student, moved, tokens, 0))

    return loss


def check_next_token_loss_gradients(student) -> None:
    """The loss carries gradients back to every parameter of the model, and they are the derivatives of
    the student's own loss (whatever its value)."""
    model, tokens, changed = loss_model(6, 5), _padded([7, 4, 6], 6, 5), []
    _loss(student, model, tokens, 0, changed)
    if changed:  # L3: the tokens written into after the embedding read them, which breaks its backward
        raise changed[0]
    try:
        call = student.run("language_model.next_token_loss", model, tokens, 0, grad=(["params:0"], [torch.tensor(1.0)]))
    except Raised as error:
        if error.error_type == "ValueError" and "no gradient reaches" in error.error_message:
            fail(with_diagnosis("S6", "next_token_loss: the loss it returns does not require gradients."))
        if error.error_type == "ValueError" and "gradient" in error.error_message:
            fail(f"next_token_loss: {error.error_message}.")
        raise
    grads = gradients.returned(call.grads, 1, "next_token_loss")[0]
    if type(grads) is not dict:
        fail(f"next_token_loss: the model's gradients came back as {describe_type(grads)}; expected a dict by name.")
    if all(grads.get(name) is None for name, _ in model.named_parameters()):
        fail(with_diagnosis("S6", "next_token_loss: no gradient reaches any of the model's parameters."))
    judged = [
        gradients.Judged(
            f"the model's {name}",
            grads.get(name),
            normal(*parameter.shape, seed=600 + number),
            _moved(student, model, tokens, name),
        )
        for number, (name, parameter) in enumerate(model.named_parameters())
    ]
    gradients.judge("next_token_loss", judged, "row lengths [7, 4, 6], pad_id 0")


def _legal_loss_input(legal: LegalLoss) -> LossInput:
    case = legal.case
    model = seeded_module(TiedLanguageModel if legal.tied else LanguageModel, case.vocab, 5, 8, seed=case.seed)
    if legal.rows is None:
        tokens = _tokens(case.batch, case.length, case.vocab, case.seed, low=0)
    else:
        tokens = _padded(legal.rows, case.vocab, case.seed, case.length)
    return LossInput(model, tokens, legal.pad_id, legal.shown)


def check_next_token_loss_legal_inputs(student) -> None:
    """The edges of the legal domain (a batch of one row, two tokens a row, a padded row alone, a model with no
    `head`): the loss the reference gives there, or a known mistake's (the other items grade those)."""
    for legal in LEGAL_LOSSES:
        case = _legal_loss_input(legal)
        suspects = Suspects(
            variants.of("next_token_loss"), lambda v, c=case: _no_grad_loss(v, c.model, c.tokens.clone(), c.pad_id)
        )
        try:
            call = student.run("language_model.next_token_loss", case.model, case.tokens, case.pad_id)
        except Raised as error:
            if suspects.raising(_as_variants_raise(error)) is None:
                fail(refused_legal_input(error, case.context, legal.why))
            continue
        got = expect_tensor(call.value, "the loss", ())
        with torch.no_grad():
            expected = reference.next_token_loss(case.model, case.tokens, case.pad_id)
        report = mismatch_report("the loss", got.detach(), expected, None, case.context)
        if report is not None and explaining([(got.detach(), suspects)], _same_loss) is None:
            fail(f"next_token_loss, on a legal input: {report}\nThat input is legal: {legal.why}.")


def _same_loss(got: torch.Tensor, variant) -> bool:
    return (
        type(variant) is torch.Tensor
        and variant.shape == got.shape
        and bool(torch.allclose(got, variant.detach(), atol=ATOL, rtol=RTOL))
    )


# -- sample ----------------------------------------------------------------------------------
def sampling_model(seed: int = 0) -> LanguageModel:
    model = seeded_module(LanguageModel, *SAMPLING_MODEL, seed=seed)
    with torch.no_grad():
        model.head.weight.mul_(4.0)  # peaked distributions, so temperature and state matter
    return model


def _sampled(student, case: SampleCase) -> tuple[list[int], object]:
    call = student.run(
        "language_model.sample", sampling_model(), case.start, case.steps, case.temperature, generator(case.seed)
    )
    tokens = call.value
    if type(tokens) is not list or not all(type(token) is int for token in tokens):
        kinds = sorted({type(token).__name__ for token in tokens}) if type(tokens) in (list, tuple) else []
        shown = f"a {type(tokens).__name__}" + (f" of {', '.join(kinds)}" if kinds else "")
        fail(f"sample returned {shown}; expected a list of Python ints (use int(token)).")
    return tokens, call


def _first_difference(got: list[int], expected: list[int]) -> str:
    for position, (a, b) in enumerate(zip(got, expected, strict=False)):
        if a != b:
            agree = (
                ""
                if position == 0
                else " (the first token agrees)"
                if position == 1
                else f" (the first {position} agree)"
            )
            return f"position {position} is {a}; expected {b}{agree}"
    return f"{len(got)} tokens; expected {len(expected)} (start plus one per step)"


def _as_the_worker_runs(variant, case: SampleCase) -> list[int]:
    """A variant's tokens from the global random state as the worker leaves it for the call (T4 draws from it):
    seeded, then the model built (its initialisation draws from it) and given the case's weights."""
    weights = sampling_model().state_dict()
    with torch.random.fork_rng():
        seed_cpu(WORKER_SEED)
        model = LanguageModel(*SAMPLING_MODEL)
        model.load_state_dict(weights)
        return variant(model, case.start, case.steps, case.temperature, generator(case.seed))


def _sample_suspects(case: SampleCase) -> Suspects:
    return Suspects(variants.of("sample"), lambda variant: _as_the_worker_runs(variant, case))


def check_sample_values(student) -> None:
    """The same seeded generator draws the same tokens as the reference."""
    drawn = [(case, _sampled(student, case)[0]) for case in SAMPLE_CASES]
    for case, got in drawn:
        expected = reference.sample(sampling_model(), case.start, case.steps, case.temperature, generator(case.seed))
        if got != expected:
            mistake = explaining([(tokens, _sample_suspects(c)) for c, tokens in drawn], lambda a, b: a == b)
            fail(with_diagnosis(mistake, f"sample: {_first_difference(got, expected)} ({case.shown})."))


def check_sample_no_grad(student) -> None:
    """Sampling runs under torch.no_grad(): every call of the model is made with autograd off (whatever
    the tokens drawn), and a list of steps + 1 tokens comes back."""
    for case in SAMPLE_CASES[:2]:
        tokens, call = _sampled(student, case)
        modes = call.grad_modes.get(0, [])
        if not modes:
            fail(f"sample never called the model ({case.shown}): each step runs it on the last token.")
        if any(modes):
            fail(with_diagnosis("T5", f"sample ran the model with autograd on ({case.shown})."))
        if len(tokens) != case.steps + 1:
            fail(f"sample returned {len(tokens)} tokens; expected {case.steps + 1} (start plus one per step).")


def check_sample_legal_inputs(student) -> None:
    """The edges of the legal domain (no steps, one step, a temperature above 1, the start token 0): the tokens
    the reference draws there, or a known mistake's (the other items grade those)."""
    for case, why in LEGAL_SAMPLES:
        suspects = _sample_suspects(case)
        try:
            tokens, _ = _sampled(student, case)
        except Raised as error:
            if suspects.raising(_as_variants_raise(error)) is None:
                fail(refused_legal_input(error, case.shown, why))
            continue
        expected = reference.sample(sampling_model(), case.start, case.steps, case.temperature, generator(case.seed))
        if tokens != expected and explaining([(tokens, suspects)], lambda a, b: a == b) is None:
            fail(
                f"sample, on a legal input: {_first_difference(tokens, expected)} ({case.shown}).\n"
                f"That input is legal: {why}."
            )


def _as_variants_raise(error: Raised) -> str:
    """The student's exception as `Suspects.raising` knows a variant's: type and first line."""
    return f"{error.error_type}: {(error.error_message.splitlines() or [''])[0]}"

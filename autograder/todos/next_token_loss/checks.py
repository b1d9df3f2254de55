"""The checks of next_token_loss's items: its cases, and one check_next_token_loss_<aspect> per item of its record.

`gradients` is judged against the student's own loss (its central differences along random directions of each
parameter), so it keeps its points when only the values are wrong. `legal_inputs` alone judges the edges of its legal
domain (a batch of one row, two tokens a row, a padded row alone, a model with no `head`), which the other items leave
out: there the function must not raise, and must give the reference's loss, or a known mistake's (graded by the other
items). `trains_the_pattern_model` trains the grader's own language model with the student's gradients
(checks/thresholds.py).
"""

import copy
from dataclasses import dataclass

import torch

from autograder.checks import calls, gradients, thresholds, variants
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
from autograder.rubric import Rubric
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
            if suspects.raising(calls.said(error)) is None:
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


def check_next_token_loss_trains_the_pattern_model(student, rubric: Rubric | None = None) -> None:
    """An LSTM trained with this loss predicts the noisy period-5 pattern's next token."""
    thresholds.verdict(thresholds.recipe_in(rubric, "next_token_loss", "trains_the_pattern_model"), student)

"""Checks for TODO 7 (next_token_loss) and TODO 8 (sample)."""

import torch

from autograder.checks import variants
from autograder.checks.compare import Comparison, expect_tensor, fail, variant_outputs, with_diagnosis
from autograder.checks.inputs import generator, seeded_module
from autograder.runtime.trusted import LanguageModel
from autograder.student import Raised
from solutions import language_model as reference

LOSS_CASES = [(4, 9, 7, 0), (1, 2, 5, 1), (3, 6, 6, 2), (2, 7, 6, 3)]  # batch, length, vocab, seed
PADDED_LENGTHS = [[9, 5, 3, 7], [2, 6, 6], [4, 4]]
SAMPLE_CASES = [(1, 12, 0.5, 0), (3, 15, 1.0, 1), (2, 10, 2.0, 2), (5, 1, 0.8, 3), (4, 0, 1.0, 4)]


def loss_model(vocab: int, seed: int) -> LanguageModel:
    return seeded_module(LanguageModel, vocab, 5, 8, seed=seed)


def _tokens(batch: int, length: int, vocab: int, seed: int) -> torch.Tensor:
    return torch.randint(1, vocab, (batch, length), generator=generator(seed))


def _padded(rows: list[int], vocab: int, seed: int) -> torch.Tensor:
    tokens = _tokens(len(rows), max(rows), vocab, seed)
    return tokens.masked_fill(torch.arange(max(rows)).unsqueeze(0) >= torch.tensor(rows).unsqueeze(1), 0)


def _loss(student, model: LanguageModel, tokens: torch.Tensor, pad_id: int | None) -> torch.Tensor:
    try:
        value = student.run("language_model.next_token_loss", model, tokens, pad_id).value
    except Raised as error:
        if "Expected target size" in error.error_message or "Expected input batch_size" in error.error_message:
            fail(with_diagnosis("S3", f"next_token_loss raised {error.error_type}: {error.error_message[:120]}"))
        raise
    return expect_tensor(value, "the loss", ())


def _compare_losses(student, cases: list[tuple[LanguageModel, torch.Tensor, int | None, str]]) -> None:
    comparison = Comparison("next_token_loss")
    for model, tokens, pad_id, context in cases:
        got = _loss(student, model, tokens, pad_id)
        with torch.no_grad():
            expected = reference.next_token_loss(model, tokens, pad_id)
            mistakes = variant_outputs(variants.NEXT_TOKEN_LOSS, model, tokens, pad_id)
        comparison.add("the loss", got, expected, context, mistakes)
    comparison.verdict()


def check_next_token_loss_values(student) -> None:
    """The mean cross-entropy of predicting tokens[:, 1:] from tokens[:, :-1]."""
    cases = []
    for batch, length, vocab, seed in LOSS_CASES:
        tokens = _tokens(batch, length, vocab, seed)
        cases.append((loss_model(vocab, seed), tokens, None, f"tokens {batch}x{length}, vocab {vocab}, pad_id None"))
    _compare_losses(student, cases)


def check_next_token_loss_padding(student) -> None:
    """Targets equal to pad_id are left out of the mean."""
    cases = []
    for seed, rows in enumerate(PADDED_LENGTHS):
        tokens = _padded(rows, 6, seed)
        cases.append((loss_model(6, seed), tokens, 0, f"row lengths {rows} padded with 0, pad_id 0"))
    _compare_losses(student, cases)


def check_next_token_loss_gradients(student) -> None:
    """The loss carries gradients back to every parameter of the model, equal to the reference's."""
    model, tokens = loss_model(6, 5), _padded([7, 4, 6], 6, 5)
    try:
        call = student.run("language_model.next_token_loss", model, tokens, 0, grad=(["params:0"], [torch.tensor(1.0)]))
    except Raised as error:
        if error.error_type == "ValueError" and "gradient" in error.error_message:
            fail(f"next_token_loss: {error.error_message}.")
        raise
    mistakes: dict[str, dict[str, torch.Tensor]] = {}
    for key, variant in variants.NEXT_TOKEN_LOSS.items():
        model.zero_grad()
        try:
            variant(model, tokens, 0).backward()
        except RuntimeError:  # a variant that cannot run on these shapes names nothing
            continue
        for name, parameter in model.named_parameters():
            mistakes.setdefault(name, {})[key] = parameter.grad.clone()
    model.zero_grad()
    reference.next_token_loss(model, tokens, 0).backward()
    comparison = Comparison("next_token_loss")
    for name, parameter in model.named_parameters():
        got = call.grads[0].get(name)
        if got is None:
            fail(f"next_token_loss: no gradient reaches the model's {name}.")
        got = expect_tensor(got, f"{name}.grad", parameter.shape)
        comparison.add(f"{name}.grad", got, parameter.grad, "row lengths [7, 4, 6], pad_id 0", mistakes.get(name, {}))
    comparison.verdict()


# -- sample ----------------------------------------------------------------------------------
def sampling_model(seed: int = 0) -> LanguageModel:
    model = seeded_module(LanguageModel, 6, 8, 12, seed=seed)
    with torch.no_grad():
        model.head.weight.mul_(4.0)  # peaked distributions, so temperature and state matter
    return model


def _sampled(student, case: tuple) -> tuple[list[int], object]:
    start, steps, temperature, seed = case
    call = student.run("language_model.sample", sampling_model(), start, steps, temperature, generator(seed))
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


def check_sample_values(student) -> None:
    """The same seeded generator draws the same tokens as the reference."""
    for case in SAMPLE_CASES:
        got, _ = _sampled(student, case)
        start, steps, temperature, seed = case
        expected = reference.sample(sampling_model(), start, steps, temperature, generator(seed))
        if got != expected:
            mistakes = [
                key
                for key, variant in variants.SAMPLE.items()
                if all(
                    _sampled(student, c)[0] == variant(sampling_model(), c[0], c[1], c[2], generator(c[3]))
                    for c in SAMPLE_CASES
                )
            ]
            report = (
                f"sample: {_first_difference(got, expected)} (start {start}, {steps} steps, temperature {temperature})."
            )
            fail(with_diagnosis(mistakes[0] if mistakes else None, report))


def check_sample_no_grad(student) -> None:
    """Sampling runs under torch.no_grad(): no graph is built for the draws."""
    for case in SAMPLE_CASES[:2]:
        _, call = _sampled(student, case)
        if any(call.grad_modes.get(0, [])):
            fail("sample runs the model with autograd on: wrap the loop in `with torch.no_grad():`.")
    check_sample_values(student)

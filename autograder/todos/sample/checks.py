"""The checks of sample's items: its cases, and one check_sample_<aspect> per item of its record.

`values` compares the tokens drawn with the reference's, from the same seeded generator; `no_grad` is judged on the
calls to the model alone, so it keeps its points when only the tokens are wrong. `legal_inputs` alone judges the edges
of its legal domain (no steps, one step, a temperature above 1, the start token 0), which the other items leave out:
there the function must not raise, and must draw the reference's tokens, or a known mistake's (graded by the other
items).
"""

from dataclasses import dataclass

import torch

from autograder.checks import calls, variants
from autograder.checks.compare import Suspects, explaining, fail, refused_legal_input, with_diagnosis
from autograder.checks.inputs import generator, seeded_module
from autograder.runtime.seeds import seed_cpu
from autograder.runtime.trusted import LanguageModel
from autograder.student import Raised
from solutions import language_model as reference


@dataclass(frozen=True)
class SampleCase:
    start: int
    steps: int
    temperature: float
    seed: int

    @property
    def shown(self) -> str:
        return f"start {self.start}, {self.steps} steps, temperature {self.temperature}"


SAMPLE_CASES = [SampleCase(1, 12, 0.5, 0), SampleCase(3, 15, 1.0, 1), SampleCase(2, 10, 0.7, 2)]
LEGAL_SAMPLES = [
    (SampleCase(4, 0, 1.0, 10), "steps is a count, and 0 steps give [start] alone"),
    (SampleCase(5, 1, 0.8, 11), "one step gives [start, t1]"),
    (SampleCase(2, 10, 2.5, 12), "any temperature above 0 is, and one above 1 flattens the distribution"),
    (SampleCase(0, 8, 1.0, 13), "start is any token of the vocabulary, 0 too"),
]
WORKER_SEED = 0  # the worker seeds the global random state so before every call (runtime/harness.py)
SAMPLING_MODEL = (6, 8, 12)  # vocab, embed, hidden


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
            if suspects.raising(calls.said(error)) is None:
                fail(refused_legal_input(error, case.shown, why))
            continue
        expected = reference.sample(sampling_model(), case.start, case.steps, case.temperature, generator(case.seed))
        if tokens != expected and explaining([(tokens, suspects)], lambda a, b: a == b) is None:
            fail(
                f"sample, on a legal input: {_first_difference(tokens, expected)} ({case.shown}).\n"
                f"That input is legal: {why}."
            )

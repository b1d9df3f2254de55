"""Checks for TODO 9 (SequenceClassifier.forward) and TODO 10 (train_step)."""

import torch

from autograder.checks import variants
from autograder.checks.compare import Comparison, expect_tensor, fail, variant_outputs, with_diagnosis
from autograder.checks.inputs import generator, seeded_module
from autograder.runtime.trusted import TinyClassifier
from solutions import classifier as reference

FULL = [(4, 8, 0), (5, 5, 1), (1, 3, 2)]  # batch, length, seed (batch == length shows C1 by value)
PADDED = [[3, 8, 1, 5], [2, 2, 6], [4, 1, 4, 2, 3]]


def _model(cell: str, pooling: str, seed: int) -> reference.SequenceClassifier:
    return seeded_module(reference.SequenceClassifier, 10, 6, 7, cell, pooling, seed=seed)


def _tokens(rows: list[int], seed: int) -> torch.Tensor:
    tokens = torch.randint(1, 10, (len(rows), max(rows)), generator=generator(seed))
    return tokens.masked_fill(torch.arange(max(rows)).unsqueeze(0) >= torch.tensor(rows).unsqueeze(1), 0)


def _logits(student, model, tokens: torch.Tensor, lengths: torch.Tensor | None) -> torch.Tensor:
    got = student.run("classifier.SequenceClassifier.forward", model, tokens, lengths).value
    batch, length = tokens.shape
    if type(got) is torch.Tensor and got.shape == (length, 2) and batch != length:
        fail(with_diagnosis("C1", f"forward returned logits of shape {tuple(got.shape)}; expected ({batch}, 2)."))
    return expect_tensor(got, "logits", (batch, 2))


def _compare(student, cases: list) -> None:
    comparison = Comparison("SequenceClassifier.forward")
    for model, tokens, lengths, context in cases:
        got = _logits(student, model, tokens, lengths)
        with torch.no_grad():
            expected = model(tokens, lengths)
            mistakes = variant_outputs(variants.CLASSIFIER_FORWARD, model, tokens, lengths)
        comparison.add("logits", got, expected, context, mistakes)
    comparison.verdict()


def _full_cases(poolings: tuple[str, ...]) -> list:
    cases = []
    for cell in ("rnn", "gru", "lstm"):
        for pooling in poolings:
            for batch, length, seed in FULL:
                tokens = _tokens([length] * batch, seed)
                context = f"cell {cell!r}, pooling {pooling!r}, tokens {batch}x{length}, lengths None"
                cases.append((_model(cell, pooling, seed), tokens, None, context))
    return cases


def check_SequenceClassifier_last_pooling(student) -> None:
    """Full-length rows: the head reads the state after the last step (rnn, gru, lstm)."""
    _compare(student, _full_cases(("last",)))


def check_SequenceClassifier_mean_max_pooling(student) -> None:
    """Full-length rows: mean and max pooling over time."""
    _compare(student, _full_cases(("mean", "max")))


def check_SequenceClassifier_padded_batch(student) -> None:
    """A padded batch with lengths: every pooling covers each row's real steps only."""
    cases = []
    for seed, rows in enumerate(PADDED):
        for pooling in ("last", "mean", "max"):
            context = f"cell 'lstm', pooling {pooling!r}, lengths {rows}"
            cases.append((_model("lstm", pooling, seed), _tokens(rows, seed), torch.tensor(rows), context))
    _compare(student, cases)


# -- train_step ------------------------------------------------------------------------------
# clip ("default": train_step's own default, 1.0), seed, steps in a row on one model, stale gradients before them
STEP_CASES = [(None, 1, 2, 0.5), (0.05, 0, 3, None), ("default", 2, 3, None), (0.5, 3, 1, 0.5)]
ROWS = [7, 3, 5, 1, 6, 7]


def _fresh(seed: int) -> TinyClassifier:
    return seeded_module(TinyClassifier, 10, 8, 16, seed=seed)


def _batches(seed: int, steps: int) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    labels = [torch.randint(0, 2, (len(ROWS),), generator=generator(seed + 100 * step + 1)) for step in range(steps)]
    return [(_tokens(ROWS, seed + 100 * step), torch.tensor(ROWS), labels[step]) for step in range(steps)]


def _context(clip, steps: int, stale: float | None) -> str:
    shown = f"clip {1.0 if clip == 'default' else clip}, {steps} step{'s' if steps > 1 else ''} in a row"
    return shown + (f", gradients left at {stale} before the first" if stale is not None else "")


def _steps(student, case: tuple):
    """The student's steps and the reference's (and each variant's), each on its own copy of one model."""
    clip, seed, steps, stale = case
    batches = _batches(seed, steps)
    extra = () if clip == "default" else (clip,)  # "default": the student's own default clip=1.0
    model = _fresh(seed)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    call = student.run("harness.train_steps", model, batches, optimizer, extra, stale)

    def run(function) -> tuple[list[float], dict]:
        copy = _fresh(seed)
        if stale is not None:
            for parameter in copy.parameters():
                parameter.grad = torch.full_like(parameter, stale)
        optimizer = torch.optim.SGD(copy.parameters(), lr=0.5)
        return [function(copy, batch, optimizer, *extra) for batch in batches], copy.state_dict()

    mistakes = {key: run(variant) for key, variant in variants.TRAIN_STEP.items()}
    return model, call.value, run(reference.train_step), mistakes, _context(clip, steps, stale)


def check_train_step_update(student) -> None:
    """After steps in a row on one model the parameters equal SGD on each step's own clipped gradient."""
    comparison = Comparison("train_step")
    for case in STEP_CASES:
        model, _, (_, expected), mistakes, context = _steps(student, case)
        for name, value in model.state_dict().items():
            variants_of = {key: state[name] for key, (_, state) in mistakes.items()}
            comparison.add(f"updated {name}", value, expected[name], context, variants_of)
    comparison.verdict()


def _close(got: float, norm: float) -> bool:
    return abs(got - norm) <= 1e-4 * max(1.0, abs(norm))


def check_train_step_clipped_norm(student) -> None:
    """Each step returns its own total gradient norm after clipping, as a float."""
    for case in STEP_CASES:
        _, got, (norms, _), mistakes, context = _steps(student, case)
        wrong = [value for value in got if type(value) not in (float, int)]
        if wrong:
            fail(f"train_step returned {type(wrong[0]).__name__}; expected a Python float (use float(norm)).")
        for step, (value, norm) in enumerate(zip(got, norms, strict=True)):
            if not _close(value, norm):
                named = [key for key, (values, _) in mistakes.items() if all(map(_close, got, values))]
                which = f"step {step + 1} of {len(norms)}" if len(norms) > 1 else "the step"
                report = f"train_step returned {value:.6f} at {which}; the norm after clipping is {norm:.6f}"
                report += f" ({context})."
                fail(with_diagnosis(named[0] if named else None, report))

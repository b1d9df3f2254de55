"""The checks of train_step's items: its steps, and one check_train_step_<aspect> per item of its record.

`clipped_norm` is judged on the student's own steps: what each step returns must be the length of the step it took
(SGD moves the parameters by lr times the gradient it uses), so a mistake in the update (clipping after the step, no
zero_grad) keeps it and only a wrong report loses it. Its legal domain (clip=None, a batch of one row) is graded by
its `legal_inputs` item alone, and only where train_step is right on an ordinary input asking the same
(checks/paired.py).
"""

from dataclasses import dataclass
from typing import Any

import torch

from autograder.checks import variants
from autograder.checks.compare import (
    CheckFailure,
    Comparison,
    Suspects,
    describe_type,
    expect_shaped,
    explaining,
    fail,
    mismatch_report,
    same_values,
    unexplained_ordinary,
    with_diagnosis,
)
from autograder.checks.inputs import generator, padded_tokens, seeded_module
from autograder.checks.paired import LegalCase, first_per_kind
from autograder.runtime.trusted import TinyClassifier
from autograder.student import Raised
from solutions import classifier as reference

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
        tokens = padded_tokens(rows, seed + 100 * step)
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
    return returned and all(same_values(steps.final[name], value) for name, value in state.items())


def _ordinary_right(student, case: StepCase) -> bool:
    """Whether train_step takes the reference's steps on the ordinary case; steps that no known mistake takes
    either fail the legal item (a train_step wrong everywhere must not earn it by being judged nowhere)."""
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
        return isinstance(known, dict) and all(same_values(got[name], known.get(name)) for name in got)

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
    first_per_kind([(case.kind, _legal_step_failure(student, case)) for case in judged])

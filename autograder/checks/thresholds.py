"""Threshold items: the student's code, trained by the grader's recipe, must reach the course's level.

The machinery every threshold item shares: an item's check (in its exercise's checks.py, autograder/todos/<key>/)
reads its recipe (`recipe_in`) and calls `verdict`, which trains, measures and decides.

The worker is trusted with nothing (docs/security.md, "How the threshold items are decided"): every
accuracy is computed by the grader, from parameters, on held-out rows whose labels never leave it.
- The classifier (the student's SequenceClassifier): the worker trains it and returns only its
  parameters (plain tensors, checked against the given __init__'s). A fresh worker, the student's module
  imported anew, predicts the held-out rows with them, with the initial parameters and with the
  recurrent layer reset to its initial weights; the reference's forward reads the trained ones here.
  The item counts the lower of the two forwards' accuracies, and needs the model near chance before
  training and with its recurrent layer reset: accuracy that does not come from what the recurrent
  layer learned earns nothing.
- The pattern model is the grader's own: the grader trains it here, step by step, with the gradients of
  the student's next_token_loss computed in the worker at the parameters it sends, and measures it here.
Each item is decided on the medians over the rubric's seeds; every number comes from rubric.toml. A seed
the seeds already trained make needless (they decide every median of the verdict: checks/medians.py) is not
trained; its Measure is NOT_NEEDED.
"""

import copy
import os
import statistics
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import torch
from torch import nn

from autograder.checks import findings, medians
from autograder.checks.compare import expect_tensor, fail, with_diagnosis
from autograder.rubric import Recipe, Rubric, load
from autograder.runtime import training
from autograder.runtime.forget_gate import open_forget_gate
from autograder.runtime.language_model import LanguageModel
from autograder.runtime.seeds import seed_cpu
from autograder.runtime.training import (
    DataSeeds,
    Stop,  # the stop rule, in the recipe: the student's check stops by it too
    kind,
    listed,
    not_needed,
    reaches,
    report,
    training_run,
)
from autograder.student import Raised
from solutions import classifier, data

# The student's check (python -m exercises.check_training) trains on rows from other seeds than the grader's.
STUDENT_SEEDS = DataSeeds(train=100, held_out=99)
GRADER_SEEDS = {
    "classifier": DataSeeds(train=1000, held_out=5000),
    "padded": DataSeeds(train=2000, held_out=6000),
    "pattern": DataSeeds(train=3000, held_out=7000),
}
RECURRENT = "rnn."  # the recurrent layer's parameters, in both models' state_dicts
BEFORE, RESET = "before any training", "with its recurrent layer reset to its initial weights after training"


@dataclass(frozen=True)
class Measure:
    """One seed's accuracies on the held-out rows, each computed by the grader from parameters."""

    trained: float | None  # the trained parameters, read by the student's forward (the pattern model: the
    # grader's); None: the seed was not needed, the seeds trained decided every median (epochs 0)
    reference: float | None = None  # the same parameters read by the reference's forward (the classifier)
    before: float | None = None  # the initial parameters
    reset: float | None = None  # the trained parameters with the recurrent layer's back at their initial values
    epochs: int | None = None  # the epochs trained: the first that cleared the stop rule, or the recipe's last

    @property
    def learned(self) -> float | None:
        """What the item counts: the lower of the two forwards, so that no code of the student's decides alone."""
        if self.trained is None or self.reference is None:
            return self.trained
        return min(self.trained, self.reference)

    @property
    def needed(self) -> bool:
        return self.trained is not None


NOT_NEEDED = Measure(None, epochs=0)  # a seed left untrained: the others had decided the verdict


def recipe_in(rubric: Rubric | None, function: str, aspect: str) -> Recipe:
    """The item's recipe in `rubric` (the grader's own rubric.toml when None: a notebook's hidden test)."""
    rubric = rubric or load()
    found = rubric.recipe(function, aspect)
    if found is None:
        raise LookupError(f"{rubric.path} has no [thresholds.{function}.{aspect}]")
    return found


def measures(
    student,
    recipe: Recipe,
    seeds: list[int] | tuple[int, ...] | None = None,
    full_length: bool | None = None,
    every_seed: bool = False,
) -> list[Measure]:
    """Each seed's measure (the rubric's seeds when None), its training stopped by the recipe's stop rule
    (full-length with `full_length`; when None, as the grader's environment says: `full_length_asked`), in
    the order of `seeds`; NOT_NEEDED for a seed the others made needless, unless `every_seed` (or full-length)
    asks for every one (the calibration's spread over its seeds)."""
    seeds = list(recipe.seeds if seeds is None else seeds)
    stop = Stop.of(recipe.settings, full_length_asked() if full_length is None else full_length)
    stop = replace(stop, decides_early=stop.decides_early and not every_seed)
    if recipe.task == "pattern":
        return pattern_measures(student, recipe, seeds, stop)
    return classifier_measures(student, recipe, seeds, stop)


# -- when a seed's training stops ------------------------------------------------------------------------
FULL_LENGTH = "AUTOGRADE_FULL_TRAININGS"  # set to 1 in the grader's environment: every training runs to its end


def full_length_asked() -> bool:
    """Whether the grader's own environment asks for full-length trainings (the benchmark's way of timing
    them). Read here, in the grader: nothing the student's code does in the worker reaches it."""
    return os.environ.get(FULL_LENGTH, "") not in ("", "0")


def _hit_rate(predictions: Any, labels: torch.Tensor) -> float:
    predictions = expect_tensor(predictions, "the predictions", labels.shape, torch.int64)
    return float((predictions == labels).float().mean())


# -- the classifier: trained in the worker, measured from its parameters -------------------------------
def initial_classifier(settings: dict[str, Any], seed: int) -> classifier.SequenceClassifier:
    """The model as the recipe starts it (the given __init__ under the run's seed, the forget gate opened)."""
    with torch.random.fork_rng():
        seed_cpu(seed)
        model = classifier.SequenceClassifier(10, settings["embed"], settings["hidden"], settings["cell"], "last")
    open_forget_gate(model.rnn, settings["forget_bias"])
    return model


def loaded(model: nn.Module, state: Any) -> nn.Module:
    """`model` with the returned `state`, which must hold exactly its parameters (names, shapes, dtypes)."""
    expected = model.state_dict()
    if not isinstance(state, dict) or state.keys() != expected.keys():
        shown = sorted(state)[:6] if isinstance(state, dict) else type(state).__name__
        fail(
            f"The grader's training run returned parameters {shown}; expected those of the given "
            f"SequenceClassifier.__init__ ({', '.join(expected)}): keep __init__ as it is given."
        )
    for name, tensor in expected.items():
        got = state[name]
        if type(got) is not torch.Tensor or got.shape != tensor.shape or got.dtype != tensor.dtype:
            fail(f"The trained parameter {name} came back as {_shown(got)}; expected {_shown(tensor)}.")
    model.load_state_dict(state)
    return model


def _shown(value: Any) -> str:
    if type(value) is torch.Tensor:
        return f"a {value.dtype} tensor of shape {tuple(value.shape)}"
    return f"a {type(value).__name__}"


def with_reset_recurrence(trained: dict[str, torch.Tensor], initial: dict[str, torch.Tensor]) -> dict[str, Any]:
    """The trained parameters with the recurrent layer's replaced by their values before training."""
    return {name: initial[name] if name.startswith(RECURRENT) else value for name, value in trained.items()}


def classifier_measures(student, recipe: Recipe, seeds: list[int], stop: Stop | None = None) -> list[Measure]:
    """Train the seeds in the worker until the stop rule ends each (only those the verdict needs, with
    `stop.decides_early`), then measure them in a fresh one (and here). When the seeds measured leave a
    median of the verdict undecided, the rest are trained and measured after all (a second phase): an item
    is never decided on fewer values than it needs."""
    stop = stop or Stop.of(recipe.settings)
    runs = {seed: _run(recipe, seed) for seed in seeds}
    found = _trained_and_measured(student, recipe, runs, stop)
    rest = {seed: run for seed, run in runs.items() if seed not in found}
    if rest and not medians.verdict_decided(recipe.settings, list(found.values()), len(seeds)):
        student.fresh()  # the rest train in a worker warmed for training, not in the measures' lighter one
        found |= _trained_and_measured(student, recipe, rest, replace(stop, decides_early=False))
    return [found.get(seed, NOT_NEEDED) for seed in seeds]


def _trained_and_measured(student, recipe: Recipe, runs: dict[int, training.Run], stop: Stop) -> dict[int, Measure]:
    stopped = stopped_trainings(student, recipe, runs, stop)
    student.fresh(preload=())  # nothing the training left answers for the measures: forwards only, no optimizer
    return {
        seed: replace(_classifier_measure(student, recipe, seed, run, stopped[seed].state), epochs=stopped[seed].epochs)
        for seed, run in runs.items()
        if seed in stopped
    }


def _run(recipe: Recipe, seed: int) -> training.Run:
    """A seed's training run, sent with the forget gate opened here (the worker holds no answer to set_forget_bias)."""
    run = training_run(data, recipe.settings, seed, GRADER_SEEDS[kind(recipe.settings)])
    return training.with_opened_gate(run, initial_classifier(recipe.settings, seed).state_dict())


class Stopped(NamedTuple):
    """A seed's training where it stopped."""

    state: dict[str, torch.Tensor]  # its parameters
    epochs: int  # the epochs it trained
    ours: float | None  # the grader's accuracy after its last epoch (None: not measured there)


def stopped_trainings(student, recipe: Recipe, runs: dict[int, training.Run], stop: Stop) -> dict[int, Stopped]:
    """Each seed's training where it stopped. The seeds go on together, one call per check: the worker returns
    parameters, the grader measures them with its own forward on its own rows (the labels never leave it) and
    asks again only for the seeds that must go on. With `stop.decides_early` only as many train at once as
    could still decide the learned median (two of three, the third when they end on both sides of the
    threshold); a seed the others made needless is not in the answer."""
    seeds, done, epochs = list(runs), {}, dict.fromkeys(runs, 0)
    starts: list | None = [runs[seed].args[:4] for seed in seeds]  # each seed's training, started when first asked
    while going := _going(seeds, done, stop, recipe.threshold):
        count = min(stop.next_check(epochs[seed]) for seed in going)
        timeout = recipe.timeout * max(1.0, len(going) * count / stop.epochs)  # a whole run's worth at least
        which = [seeds.index(seed) for seed in going]
        returned = student.run("harness.train_epochs", count, starts, which, timeout=timeout).value
        starts = None
        for seed, state in zip(going, _states(returned, len(going)), strict=True):
            epochs[seed] += count
            trained = loaded(initial_classifier(recipe.settings, seed), state).state_dict()
            ours = _ours(recipe, seed, runs[seed], trained) if stop.measured(epochs[seed]) else None
            if stop.stops(epochs[seed], ours):
                done[seed] = Stopped(trained, epochs[seed], ours)
    return done


def _going(seeds: list[int], done: dict[int, Stopped], stop: Stop, threshold: float) -> list[int]:
    """The seeds to train on: every one not done, or (seeds decided early) as many as could still decide."""
    left = [seed for seed in seeds if seed not in done]
    if not stop.decides_early:
        return left
    cleared = sum(1 for seed in done.values() if seed.ours is not None and seed.ours >= threshold)
    return left[: medians.still_training(cleared, len(done) - cleared, len(seeds))]


def _states(returned: Any, count: int) -> list[Any]:
    if not isinstance(returned, list) or len(returned) != count:
        fail(f"The grader's training run returned {_shown(returned)}; expected the parameters of {count} trainings.")
    return returned


def _ours(recipe: Recipe, seed: int, run: training.Run, state: dict[str, torch.Tensor]) -> float:
    """The held-out accuracy of `state` read by the reference's forward, here (the grader's own measure)."""
    tokens, lengths = run.args[4:]
    reference = loaded(initial_classifier(recipe.settings, seed), state)
    with torch.random.fork_rng():
        return _hit_rate(training.predict_classifier(None, reference, tokens, lengths), run.labels)


def _classifier_measure(student, recipe: Recipe, seed: int, run: training.Run, trained: dict) -> Measure:
    tokens, lengths = run.args[4:]
    initial = initial_classifier(recipe.settings, seed).state_dict()

    def students(state: dict[str, torch.Tensor]) -> float:
        model = loaded(initial_classifier(recipe.settings, seed), state)  # sent as the student's own class
        call = student.run("harness.predict_classifier", model, tokens, lengths, timeout=recipe.timeout)
        return _hit_rate(call.value, run.labels)

    ours = _ours(recipe, seed, run, trained)
    return Measure(students(trained), ours, students(initial), students(with_reset_recurrence(trained, initial)))


# -- the pattern model: the grader's own, trained here with the student's gradients ---------------------
def pattern_model(settings: dict[str, Any]) -> LanguageModel:
    """The grader's language model as the recipe starts it (its run's seed)."""
    with torch.random.fork_rng():
        seed_cpu(settings["seed"])
        return LanguageModel(settings["vocab"], settings["embed"], settings["hidden"])


def pattern_training(student, settings: dict[str, Any], tokens: torch.Tensor) -> Iterator[LanguageModel]:
    """The recipe's epochs (Adam, full batch, norm clipped at 1.0) on the grader's model; yields it after each,
    so that its parameters can be measured at any epoch."""
    model = pattern_model(settings)
    optimizer = torch.optim.Adam(model.parameters(), lr=settings["learning_rate"])
    for _ in range(settings["epochs"]):
        model.train()  # a measure between two epochs leaves it in evaluation mode
        gradients = _loss_gradients(student, model, tokens)
        for name, parameter in model.named_parameters():
            parameter.grad = gradients[name]
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        yield model


def _loss_gradients(student, model: LanguageModel, tokens: torch.Tensor) -> dict[str, torch.Tensor | None]:
    """The gradients of the student's loss at the model's parameters, computed in the worker on a copy
    (whatever the call does to its model stays there)."""
    try:
        call = student.run("language_model.next_token_loss", copy.deepcopy(model), tokens, grad=(["params:0"], [ONE]))
    except Raised as error:
        if error.error_type == "ValueError" and "no gradient reaches" in error.error_message:
            fail(with_diagnosis("S6", f"{NO_GRADIENT}: the loss it returns does not require gradients."))
        if error.error_type == "ValueError" and "gradient" in error.error_message:
            fail(f"next_token_loss must return a scalar tensor that carries gradients: {error.error_message}.")
        raise
    returned = call.grads[0] if call.grads else None
    if not isinstance(returned, dict):
        fail("next_token_loss gave no gradients for the model's parameters.")
    if all(returned.get(name) is None for name, _ in model.named_parameters()):  # a loss with no graph behind it
        fail(with_diagnosis("S6", f"{NO_GRADIENT}: no gradient reaches any of the model's parameters."))
    return {name: _gradient(returned.get(name), parameter, name) for name, parameter in model.named_parameters()}


NO_GRADIENT = "The pattern model cannot train with next_token_loss"  # said before any guess from the accuracy


ONE = torch.tensor(1.0)


def _gradient(value: Any, parameter: nn.Parameter, name: str) -> torch.Tensor | None:
    if value is None:
        return None  # the loss does not reach it: Adam leaves it alone, as it would in a training loop
    if type(value) is not torch.Tensor or value.shape != parameter.shape or not value.is_floating_point():
        fail(f"The gradient of next_token_loss for {name} came back as {_shown(value)}; expected {_shown(parameter)}.")
    return value.detach().to(parameter.dtype).clone()


def pattern_accuracy(model: LanguageModel, inputs: torch.Tensor, labels: torch.Tensor) -> float:
    """The next-token accuracy of the grader's model, computed here."""
    model.eval()
    with torch.no_grad():
        logits, _ = model(inputs)
    return float((logits.argmax(dim=-1) == labels).float().mean())


def pattern_measures(student, recipe: Recipe, seeds: list[int], stop: Stop) -> list[Measure]:
    """Each seed's measure, one seed after the other; with `stop.decides_early`, none once the seeds measured
    decide every median of the verdict."""
    found: dict[int, Measure] = {}
    for seed in seeds:
        if stop.decides_early and medians.verdict_decided(recipe.settings, list(found.values()), len(seeds)):
            break
        found[seed] = pattern_measure(student, recipe, seed, stop)
    return [found.get(seed, NOT_NEEDED) for seed in seeds]


def pattern_measure(student, recipe: Recipe, seed: int, stop: Stop | None = None) -> Measure:
    run = training_run(data, recipe.settings, seed, GRADER_SEEDS["pattern"])
    settings, tokens, inputs = run.args
    stop = stop or Stop.of(settings)
    for epoch, model in enumerate(pattern_training(student, settings, tokens), start=1):  # the grader's parameters
        accuracy = pattern_accuracy(model, inputs, run.labels) if stop.checked(epoch) else None
        if stop.stops(epoch, accuracy):
            break
    initial = pattern_model(settings)
    reset = copy.deepcopy(model)
    reset.load_state_dict(with_reset_recurrence(model.state_dict(), initial.state_dict()))
    trained, before = pattern_accuracy(model, inputs, run.labels), pattern_accuracy(initial, inputs, run.labels)
    return Measure(trained, None, before, pattern_accuracy(reset, inputs, run.labels), epoch)


# -- the verdict -----------------------------------------------------------------------------------------
def _known(values: list[float | None]) -> list[float]:
    return [value for value in values if value is not None]


def _median(values: list[float | None]) -> float | None:
    """The median of the seeds trained: where seeds were not needed, on the same side of every bound as the
    median over all of them (the seeds trained decided it: checks/medians.py)."""
    known = _known(values)
    return statistics.median(known) if known else None


def shortfall(settings: dict[str, Any], found: list[Measure]) -> str | None:
    """Why the item fails (its feedback), or None when it passes.

    With `chance_at_most` in the recipe, the model must be near chance before training and with its
    recurrent layer reset (medians over the seeds); then the median of what it learned must reach the threshold.
    A seed not needed (NOT_NEEDED) counts in none of them: the others decided each.
    """
    chance = settings.get("chance_at_most")
    for label, values in ((BEFORE, [m.before for m in found]), (RESET, [m.reset for m in found])):
        median = _median(values)
        if chance is not None and median is not None and median > chance:
            return not_learned(settings, label, values)
    learned = [m.learned for m in found]
    if reaches(settings, _known(learned)):
        return None
    text = report(settings, learned)
    own, ours = _median([m.trained for m in found]), _median([m.reference for m in found])
    if ours is not None and own is not None and own >= settings["threshold"] > ours:
        text += (
            f"\nYour forward reached {own:.3f} with the trained parameters, but read by the lesson's forward the\n"
            f"same parameters reach only {ours:.3f}: the accuracy does not come from what the model learned."
        )
    return text


def not_learned(settings: dict[str, Any], label: str, values: list[float | None]) -> str:
    return (
        f"{settings['describe']}:\n"
        f"  {_median(values):.3f} of the held-out rows are right {label} (seeds: {listed(settings, values)});\n"
        f"  a model that has learned nothing there is near chance (at most {settings['chance_at_most']:.2f})."
        f"{not_needed(settings, values)}\n"
        "This item scores 0: the accuracy does not come from what the recurrent layer learned. The classes\n"
        "must be computed from the recurrent layer's state (Day 3), never from a rule written by hand, and the\n"
        "same way in training and in evaluation mode."
    )


def _record(recipe: Recipe, found: list[Measure]) -> None:
    """The item's measures in results.json: per seed (in the order of `seeds`) its accuracies and epochs;
    a seed not needed has null accuracies and 0 epochs, and is listed in `seeds_not_needed`; `accuracy` is
    the median over the seeds trained."""
    findings.measure(
        accuracy=round(_median([m.learned for m in found]), 4),
        threshold=recipe.threshold,
        seeds=list(recipe.seeds),
        seed_accuracies=[_rounded(m.learned) for m in found],
        before_training=[_rounded(m.before) for m in found],
        recurrent_reset=[_rounded(m.reset) for m in found],
        seed_epochs=[m.epochs for m in found],
        epochs=recipe.settings["epochs"],
        seeds_not_needed=[seed for seed, m in zip(recipe.seeds, found, strict=True) if not m.needed],
    )


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def verdict(recipe: Recipe, student) -> None:
    """Train the student's code by `recipe` and fail, saying why, unless its item is earned (the item's measures
    recorded for results.json either way): what each threshold item's check does."""
    found = measures(student, recipe)
    _record(recipe, found)
    why = shortfall(recipe.settings, found)
    if why is not None:
        fail(why)

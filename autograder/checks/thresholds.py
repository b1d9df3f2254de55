"""Threshold items: the student's code, trained by the grader's recipe, must reach the course's level.

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
Each item is decided on the medians over the rubric's seeds; every number comes from rubric.toml.
"""

import copy
import statistics
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from autograder.checks import findings
from autograder.checks.compare import expect_tensor, fail
from autograder.rubric import Recipe, Rubric, load
from autograder.runtime import training
from autograder.runtime.forget_gate import open_forget_gate
from autograder.runtime.language_model import LanguageModel
from autograder.runtime.training import DataSeeds, kind, reaches, report, training_run
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

    trained: float  # the trained parameters, read by the student's forward (the pattern model: the grader's)
    reference: float | None = None  # the same parameters read by the reference's forward (the classifier)
    before: float | None = None  # the initial parameters
    reset: float | None = None  # the trained parameters with the recurrent layer's back at their initial values

    @property
    def learned(self) -> float:
        """What the item counts: the lower of the two forwards, so that no code of the student's decides alone."""
        return self.trained if self.reference is None else min(self.trained, self.reference)


def recipe_in(rubric: Rubric | None, function: str, aspect: str) -> Recipe:
    """The item's recipe in `rubric` (the grader's own rubric.toml when None: a notebook's hidden test)."""
    rubric = rubric or load()
    found = rubric.recipe(function, aspect)
    if found is None:
        raise LookupError(f"{rubric.path} has no [thresholds.{function}.{aspect}]")
    return found


def measures(student, recipe: Recipe, seeds: list[int] | tuple[int, ...] | None = None) -> list[Measure]:
    """Each seed's measure (the rubric's seeds when None)."""
    seeds = list(recipe.seeds if seeds is None else seeds)
    if recipe.task == "pattern":
        return [pattern_measure(student, recipe, seed) for seed in seeds]
    return classifier_measures(student, recipe, seeds)


def _hit_rate(predictions: Any, labels: torch.Tensor) -> float:
    predictions = expect_tensor(predictions, "the predictions", labels.shape, torch.int64)
    return float((predictions == labels).float().mean())


# -- the classifier: trained in the worker, measured from its parameters -------------------------------
def initial_classifier(settings: dict[str, Any], seed: int) -> classifier.SequenceClassifier:
    """The model as the recipe starts it (the given __init__ under the run's seed, the forget gate opened)."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
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


def classifier_measures(student, recipe: Recipe, seeds: list[int]) -> list[Measure]:
    """Train every seed in the worker, then measure every seed in a fresh one (and here)."""
    runs = {seed: training_run(data, recipe.settings, seed, GRADER_SEEDS[kind(recipe.settings)]) for seed in seeds}
    states = {}
    for seed, run in runs.items():
        returned = student.run("harness.trained_classifier", *run.args[:4], timeout=recipe.timeout).value
        states[seed] = loaded(initial_classifier(recipe.settings, seed), returned).state_dict()
    student.fresh()  # nothing the training process left behind answers for the measures
    return [_classifier_measure(student, recipe, seed, runs[seed], states[seed]) for seed in seeds]


def _classifier_measure(student, recipe: Recipe, seed: int, run: training.Run, trained: dict) -> Measure:
    tokens, lengths = run.args[4:]
    initial = initial_classifier(recipe.settings, seed).state_dict()

    def students(state: dict[str, torch.Tensor]) -> float:
        model = loaded(initial_classifier(recipe.settings, seed), state)  # sent as the student's own class
        call = student.run("harness.predict_classifier", model, tokens, lengths, timeout=recipe.timeout)
        return _hit_rate(call.value, run.labels)

    reference = loaded(initial_classifier(recipe.settings, seed), trained)
    with torch.random.fork_rng():
        ours = _hit_rate(training.predict_classifier(None, reference, tokens, lengths), run.labels)
    return Measure(students(trained), ours, students(initial), students(with_reset_recurrence(trained, initial)))


# -- the pattern model: the grader's own, trained here with the student's gradients ---------------------
def pattern_model(settings: dict[str, Any]) -> LanguageModel:
    """The grader's language model as the recipe starts it (its run's seed)."""
    with torch.random.fork_rng():
        torch.manual_seed(settings["seed"])
        return LanguageModel(settings["vocab"], settings["embed"], settings["hidden"])


def pattern_training(student, settings: dict[str, Any], tokens: torch.Tensor) -> Iterator[LanguageModel]:
    """The recipe's epochs (Adam, full batch, norm clipped at 1.0) on the grader's model; yields it after each,
    so that its parameters can be measured at any epoch."""
    model = pattern_model(settings)
    optimizer = torch.optim.Adam(model.parameters(), lr=settings["learning_rate"])
    model.train()
    for _ in range(settings["epochs"]):
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
        if error.error_type == "ValueError" and "gradient" in error.error_message:
            fail(f"next_token_loss must return a scalar tensor that carries gradients: {error.error_message}.")
        raise
    returned = call.grads[0] if call.grads else None
    if not isinstance(returned, dict):
        fail("next_token_loss gave no gradients for the model's parameters.")
    return {name: _gradient(returned.get(name), parameter, name) for name, parameter in model.named_parameters()}


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


def pattern_measure(student, recipe: Recipe, seed: int) -> Measure:
    run = training_run(data, recipe.settings, seed, GRADER_SEEDS["pattern"])
    settings, tokens, inputs = run.args
    epochs = list(pattern_training(student, settings, tokens))  # every epoch's parameters are the grader's
    model, initial = epochs[-1], pattern_model(settings)
    reset = copy.deepcopy(model)
    reset.load_state_dict(with_reset_recurrence(model.state_dict(), initial.state_dict()))
    trained, before = pattern_accuracy(model, inputs, run.labels), pattern_accuracy(initial, inputs, run.labels)
    return Measure(trained, None, before, pattern_accuracy(reset, inputs, run.labels))


# -- the verdict -----------------------------------------------------------------------------------------
def _median(values: list[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return statistics.median(known) if known else None


def shortfall(settings: dict[str, Any], found: list[Measure]) -> str | None:
    """Why the item fails (its feedback), or None when it passes.

    With `chance_at_most` in the recipe, the model must be near chance before training and with its
    recurrent layer reset (medians over the seeds); then the median of what it learned must reach the threshold.
    """
    chance = settings.get("chance_at_most")
    for label, values in ((BEFORE, [m.before for m in found]), (RESET, [m.reset for m in found])):
        median = _median(values)
        if chance is not None and median is not None and median > chance:
            return not_learned(settings, label, [value for value in values if value is not None])
    learned = [m.learned for m in found]
    if reaches(settings, learned):
        return None
    text = report(settings, learned)
    own, ours = _median([m.trained for m in found]), _median([m.reference for m in found])
    if ours is not None and own is not None and own >= settings["threshold"] > ours:
        text += (
            f"\nYour forward reached {own:.3f} with the trained parameters, but read by the lesson's forward the\n"
            f"same parameters reach only {ours:.3f}: the accuracy does not come from what the model learned."
        )
    return text


def not_learned(settings: dict[str, Any], label: str, values: list[float]) -> str:
    shown = ", ".join(f"{value:.3f}" for value in values)
    return (
        f"{settings['describe']}:\n"
        f"  {statistics.median(values):.3f} of the held-out rows are right {label} (seeds: {shown});\n"
        f"  a model that has learned nothing there is near chance (at most {settings['chance_at_most']:.2f}).\n"
        "This item scores 0: the accuracy does not come from what the recurrent layer learned. The classes\n"
        "must be computed from the recurrent layer's state (Day 3), never from a rule written by hand, and the\n"
        "same way in training and in evaluation mode."
    )


def _record(recipe: Recipe, found: list[Measure]) -> None:
    learned = [m.learned for m in found]
    findings.measure(
        accuracy=round(statistics.median(learned), 4),
        threshold=recipe.threshold,
        seeds=list(recipe.seeds),
        seed_accuracies=[round(value, 4) for value in learned],
        before_training=[None if m.before is None else round(m.before, 4) for m in found],
        recurrent_reset=[None if m.reset is None else round(m.reset, 4) for m in found],
    )


def _verdict(recipe: Recipe, student) -> None:
    found = measures(student, recipe)
    _record(recipe, found)
    why = shortfall(recipe.settings, found)
    if why is not None:
        fail(why)


def check_SequenceClassifier_learns_the_task(student, rubric: Rubric | None = None) -> None:
    """Trained by the grader's recipe, the classifier learns the length-8 'first digit again' task."""
    _verdict(recipe_in(rubric, "SequenceClassifier", "learns_the_task"), student)


def check_SequenceClassifier_learns_padded_rows(student, rubric: Rubric | None = None) -> None:
    """Trained on padded rows of lengths 2-8, it classifies rows padded far beyond them."""
    _verdict(recipe_in(rubric, "SequenceClassifier", "learns_padded_rows"), student)


def check_next_token_loss_trains_the_pattern_model(student, rubric: Rubric | None = None) -> None:
    """An LSTM trained with this loss predicts the noisy period-5 pattern's next token."""
    _verdict(recipe_in(rubric, "next_token_loss", "trains_the_pattern_model"), student)

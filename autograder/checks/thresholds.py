"""Threshold items: the student's code, trained by the grader's recipe, must reach the course's level.

Each item trains over the rubric's seeds in the worker (autograder/runtime/training.py),
gets predictions back, and decides on the median accuracy, so one unlucky seed neither
fails a correct solution nor passes a wrong one. Every number comes from rubric.toml.
"""

import statistics

import torch

from autograder.checks import findings
from autograder.checks.compare import expect_tensor, fail
from autograder.rubric import Recipe, Rubric, load
from autograder.runtime.training import DataSeeds, kind, reaches, report, training_run
from solutions import data

# The student's check (python -m exercises.check_training) trains on rows from other seeds than the grader's.
STUDENT_SEEDS = DataSeeds(train=100, held_out=99)
GRADER_SEEDS = {
    "classifier": DataSeeds(train=1000, held_out=5000),
    "padded": DataSeeds(train=2000, held_out=6000),
    "pattern": DataSeeds(train=3000, held_out=7000),
}


def recipe_in(rubric: Rubric | None, function: str, aspect: str) -> Recipe:
    """The item's recipe in `rubric` (the grader's own rubric.toml when None: a notebook's hidden test)."""
    rubric = rubric or load()
    found = rubric.recipe(function, aspect)
    if found is None:
        raise LookupError(f"{rubric.path} has no [thresholds.{function}.{aspect}]")
    return found


def accuracy(student, recipe: Recipe, seed: int) -> float:
    """Train once with `seed` through `student`; the accuracy on the held-out rows."""
    target, args, labels = training_run(data, recipe.settings, seed, GRADER_SEEDS[kind(recipe.settings)])
    predictions = student.run(target, *args, timeout=recipe.timeout).value
    predictions = expect_tensor(predictions, "the predictions", labels.shape, torch.int64)
    return float((predictions == labels).float().mean())


def _verdict(recipe: Recipe, student) -> None:
    accuracies = [accuracy(student, recipe, seed) for seed in recipe.seeds]
    findings.measure(
        accuracy=round(statistics.median(accuracies), 4),
        threshold=recipe.threshold,
        seeds=list(recipe.seeds),
        seed_accuracies=[round(value, 4) for value in accuracies],
    )
    if not reaches(recipe.settings, accuracies):
        fail(report(recipe.settings, accuracies))


def check_SequenceClassifier_learns_the_task(student, rubric: Rubric | None = None) -> None:
    """Trained by the grader's recipe, the classifier learns the length-8 'first digit again' task."""
    _verdict(recipe_in(rubric, "SequenceClassifier", "learns_the_task"), student)


def check_SequenceClassifier_learns_padded_rows(student, rubric: Rubric | None = None) -> None:
    """Trained on padded rows of lengths 2-8, it classifies rows padded far beyond them."""
    _verdict(recipe_in(rubric, "SequenceClassifier", "learns_padded_rows"), student)


def check_next_token_loss_trains_the_pattern_model(student, rubric: Rubric | None = None) -> None:
    """An LSTM trained with this loss predicts the noisy period-5 pattern's next token."""
    _verdict(recipe_in(rubric, "next_token_loss", "trains_the_pattern_model"), student)

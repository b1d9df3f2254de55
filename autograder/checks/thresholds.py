"""Threshold items: the student's code, trained by the grader's recipe, must reach the course's level.

Each item trains over the rubric's seeds in the worker (autograder/runtime/training.py),
gets predictions back, and decides on the median accuracy, so one unlucky seed neither
fails a correct solution nor passes a wrong one. Every number comes from rubric.toml.
"""

import statistics
from typing import Any

import torch

from autograder import rubric
from autograder.checks import findings
from autograder.checks.compare import expect_tensor, fail
from autograder.runtime.training import DataSeeds, kind, reaches, report, training_run
from solutions import data

# The student's check (python -m exercises.check_training) trains on rows from other seeds than the grader's.
STUDENT_SEEDS = DataSeeds(train=100, held_out=99)
GRADER_SEEDS = {
    "classifier": DataSeeds(train=1000, held_out=5000),
    "padded": DataSeeds(train=2000, held_out=6000),
    "pattern": DataSeeds(train=3000, held_out=7000),
}


def recipe(function: str, aspect: str) -> dict[str, Any]:
    return dict(rubric.load().thresholds[function][aspect])


def accuracy(student, settings: dict[str, Any], seed: int) -> float:
    """Train once with `seed` through `student`; the accuracy on the held-out rows."""
    target, args, labels = training_run(data, settings, seed, GRADER_SEEDS[kind(settings)])
    predictions = student.run(target, *args, timeout=settings["timeout"]).value
    predictions = expect_tensor(predictions, "the predictions", labels.shape, torch.int64)
    return float((predictions == labels).float().mean())


def _verdict(function: str, aspect: str, student) -> None:
    settings = recipe(function, aspect)
    accuracies = [accuracy(student, settings, seed) for seed in settings["seeds"]]
    findings.measure(
        accuracy=round(statistics.median(accuracies), 4),
        threshold=settings["threshold"],
        seeds=list(settings["seeds"]),
        seed_accuracies=[round(value, 4) for value in accuracies],
    )
    if not reaches(settings, accuracies):
        fail(report(settings, accuracies))


def check_SequenceClassifier_learns_the_task(student) -> None:
    """Trained by the grader's recipe, the classifier learns the length-8 'first digit again' task."""
    _verdict("SequenceClassifier", "learns_the_task", student)


def check_SequenceClassifier_learns_padded_rows(student) -> None:
    """Trained on padded rows of lengths 2-8, it classifies rows padded far beyond them."""
    _verdict("SequenceClassifier", "learns_padded_rows", student)


def check_next_token_loss_trains_the_pattern_model(student) -> None:
    """An LSTM trained with this loss predicts the noisy period-5 pattern's next token."""
    _verdict("next_token_loss", "trains_the_pattern_model", student)

"""Threshold items: the student's code, trained by the grader's recipe, must reach the course's level.

Each item trains over the rubric's seeds in the worker (autograder/runtime/training.py),
gets predictions back, and decides on the median accuracy, so one unlucky seed neither
fails a correct solution nor passes a wrong one. Every number comes from rubric.toml.
"""

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from autograder import rubric
from autograder.checks import findings
from autograder.checks.compare import expect_tensor, fail
from solutions import data


@dataclass(frozen=True)
class Task:
    """The data of one training run: what the worker sees, and the labels only the grader holds."""

    args: tuple[Any, ...]
    labels: torch.Tensor


def recipe(function: str, aspect: str) -> dict[str, Any]:
    return dict(rubric.load().thresholds[function][aspect])


def classifier_task(settings: dict[str, Any], seed: int) -> Task:
    run = {**settings, "seed": seed}
    if "max_length" not in settings:  # full-length rows of the Day 1 task
        tokens, labels = data.make_sequences(settings["train_size"], seed=1000 + seed)
        eval_tokens, eval_labels = data.make_sequences(settings["eval_size"], seed=5000)
        return Task((run, tokens, None, labels, eval_tokens, None), eval_labels)
    low, high = settings["min_length"], settings["max_length"]
    tokens, lengths, labels = data.make_padded_sequences(settings["train_size"], low, high, seed=2000 + seed)
    eval_tokens, eval_lengths, eval_labels = data.make_padded_sequences(settings["eval_size"], low, high, seed=6000)
    # evaluation rows carry much more padding than training ever showed: only the gathered state ignores it
    extra = torch.zeros(len(eval_tokens), settings["eval_padded_to"] - high, dtype=torch.long)
    return Task((run, tokens, lengths, labels, torch.cat([eval_tokens, extra], dim=1), eval_lengths), eval_labels)


def pattern_task(settings: dict[str, Any], seed: int) -> Task:
    tokens = data.make_pattern(seed=3000 + seed)
    held_out = data.make_pattern(seed=7000)
    return Task(({**settings, "seed": seed}, tokens, held_out[:, :-1]), held_out[:, 1:])


TASKS: dict[str, tuple[str, Callable[[dict[str, Any], int], Task]]] = {
    "classifier": ("harness.train_classifier", classifier_task),
    "pattern": ("harness.train_pattern_model", pattern_task),
}


def accuracy(student, settings: dict[str, Any], seed: int) -> float:
    """Train once with `seed` through `student`; the accuracy on the held-out rows."""
    target, make = TASKS[settings["task"]]
    task = make(settings, seed)
    predictions = student.run(target, *task.args, timeout=settings["timeout"]).value
    predictions = expect_tensor(predictions, "the predictions", task.labels.shape, torch.int64)
    return float((predictions == task.labels).float().mean())


def _verdict(function: str, aspect: str, student) -> None:
    settings = recipe(function, aspect)
    accuracies = [accuracy(student, settings, seed) for seed in settings["seeds"]]
    reached = statistics.median(accuracies)
    findings.measure(
        accuracy=round(reached, 4),
        threshold=settings["threshold"],
        seeds=list(settings["seeds"]),
        seed_accuracies=[round(value, 4) for value in accuracies],
    )
    if reached < settings["threshold"]:
        shown = ", ".join(f"{value:.3f}" for value in accuracies)
        fail(
            f"{settings['describe']}:\n"
            f"  median accuracy {reached:.3f} (seeds: {shown}); it needs {settings['threshold']:.2f}.\n"
            f"  The lesson's model reached {settings['lesson']}.\n"
            f"{_likely_cause(settings, reached)}"
        )


def _likely_cause(settings: dict[str, Any], reached: float) -> str:
    if settings["task"] == "pattern":
        if reached < 0.5:
            return (
                "Near chance like this, the loss is usually not shifted, or shifted the wrong way: the model\n"
                "must read tokens[:, :-1] and be scored on tokens[:, 1:] (Day 6, 'The shift is the whole task')."
            )
        return "Check that every target position counts once and the logits are flattened to (N, vocab)."
    if reached < 0.6:
        return (
            "Near 0.5 the head never sees the memory of the first digit: the state is taken from the wrong\n"
            "place (output[-1] is the last row, output[:, 0] the first step; with padding, gather each row\n"
            "at lengths - 1) (Day 3, Day 4)."
        )
    return "It learns something but not enough: check that padding steps never reach the pooled state (Day 4)."


def check_SequenceClassifier_learns_the_task(student) -> None:
    """Trained by the grader's recipe, the classifier learns the length-8 'first digit again' task."""
    _verdict("SequenceClassifier", "learns_the_task", student)


def check_SequenceClassifier_learns_padded_rows(student) -> None:
    """Trained on padded rows of lengths 2-8, it classifies rows padded far beyond them."""
    _verdict("SequenceClassifier", "learns_padded_rows", student)


def check_next_token_loss_trains_the_pattern_model(student) -> None:
    """An LSTM trained with this loss predicts the noisy period-5 pattern's next token."""
    _verdict("next_token_loss", "trains_the_pattern_model", student)

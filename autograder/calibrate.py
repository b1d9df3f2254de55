"""`autograde calibrate`: evidence that each threshold separates right from wrong.

For every threshold item, the reference is trained over `calibration_seeds` seeds and
each known mistake that bears on it over the same seeds, with the very harness the
grading uses (in process: all of it is the grader's own code). A threshold holds when
the reference's minimum is above it and every mistake's maximum below it. Each run is
also measured before training and with its recurrent layer reset to its initial weights:
where the recipe has `chance_at_most`, the reference's maximum of both must stay at or under it.
"""

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from autograder.checks import variants
from autograder.checks.thresholds import Measure, measures
from autograder.rubric import Recipe, Rubric
from autograder.student import InProcess
from solutions import classifier, language_model


class Worst(NamedTuple):
    """The known mistake that came closest to the threshold, and its best seed's accuracy."""

    mistake: str
    accuracy: float


@dataclass
class Calibration:
    item: str
    threshold: float
    reference: list[float]
    mistakes: dict[str, list[float]]
    seconds_per_seed: float
    chance: float | None = None  # the recipe's chance_at_most
    before: dict[str, list[float]] = field(default_factory=dict)  # "reference" or a mistake -> before training
    reset: dict[str, list[float]] = field(default_factory=dict)  # ... -> with the recurrent layer reset

    @property
    def near_chance_margin(self) -> float | None:
        """How far the reference's highest accuracy before training or reset stays under chance_at_most."""
        measured = self.before.get("reference", []) + self.reset.get("reference", [])
        return None if self.chance is None or not measured else self.chance - max(measured)

    @property
    def worst_mistake(self) -> Worst:
        name = max(self.mistakes, key=lambda key: max(self.mistakes[key]))
        return Worst(name, max(self.mistakes[name]))

    @property
    def margin_above(self) -> float:
        """How far the reference's worst seed clears the threshold."""
        return min(self.reference) - self.threshold

    @property
    def margin_below(self) -> float:
        """How far the best seed of the best mistake stays under the threshold."""
        return self.threshold - self.worst_mistake.accuracy

    @property
    def holds(self) -> bool:
        near_chance = self.near_chance_margin
        return self.margin_above > 0 and self.margin_below > 0 and (near_chance is None or near_chance >= 0)


def _with_forward(forward: Callable[..., Any]) -> type:
    return type("SequenceClassifier", (classifier.SequenceClassifier,), {"forward": forward})


def _classifier(forward: Callable[..., Any] | None) -> InProcess:
    kind = classifier.SequenceClassifier if forward is None else _with_forward(forward)
    return InProcess(lambda dotted: {"classifier.SequenceClassifier": kind}[dotted])


def _loss(function: Callable[..., Any]) -> InProcess:
    return InProcess(lambda dotted: {"language_model.next_token_loss": function}[dotted])


def _first_step(model, tokens, lengths=None):
    output, _ = model.rnn(model.embedding(tokens))
    return model.head(output[:, 0])


def _state_after_padding(model, tokens, lengths=None):
    return variants.CLASSIFIER_FORWARD["C2"](model, tokens, lengths)


def _order_blind(model, tokens, lengths=None):
    """The recurrence left out: the head reads the mean of the embeddings (Day 7's bag of embeddings)."""
    embedded = model.embedding(tokens)
    return model.head(model.rnn(embedded.mean(dim=1, keepdim=True))[0][:, 0])


# The known mistakes that bear on each threshold item, as students would have them.
MISTAKES: dict[str, dict[str, InProcess]] = {
    "classifier": {
        "first step": _classifier(_first_step),
        "order-blind": _classifier(_order_blind),
        "C2 state after padding": _classifier(_state_after_padding),
    },
    "pattern": {
        "S1 no shift": _loss(variants.NEXT_TOKEN_LOSS["S1"]),
        "S2 shifted backwards": _loss(variants.NEXT_TOKEN_LOSS["S2"]),
    },
}
REFERENCE = {"classifier": _classifier(None), "pattern": _loss(language_model.next_token_loss)}


def calibrate(
    rubric: Rubric, seeds: int | None = None, progress: Callable[[str], None] = lambda _: None
) -> list[Calibration]:
    """Run every threshold item's reference and mistakes over the calibration seeds."""
    return [_calibration(recipe, seeds or recipe.calibration_seeds, progress) for recipe in rubric.recipes]


def _calibration(recipe: Recipe, count: int, progress: Callable[[str], None]) -> Calibration:
    progress(f"{recipe.name}: reference over {count} seeds")
    started = time.monotonic()
    found = {"reference": measures(REFERENCE[recipe.task], recipe, list(range(count)))}
    seconds = (time.monotonic() - started) / count
    for label, student in MISTAKES[recipe.task].items():
        if label.startswith("C2") and "max_length" not in recipe.settings:
            continue  # without padding the state after the padding is the right one
        progress(f"{recipe.name}: {label}")
        found[label] = measures(student, recipe, list(range(count)))
    learned = {label: [m.learned for m in runs] for label, runs in found.items()}
    reference = learned.pop("reference")
    before, reset = _part(found, "before"), _part(found, "reset")
    chance = recipe.settings.get("chance_at_most")
    return Calibration(recipe.name, recipe.threshold, reference, learned, seconds, chance, before, reset)


def _part(found: dict[str, list[Measure]], name: str) -> dict[str, list[float]]:
    return {label: [getattr(m, name) for m in runs if getattr(m, name) is not None] for label, runs in found.items()}


def table(rows: list[Calibration]) -> str:
    header = (
        f"{'item':<42} {'threshold':>9} {'ref min':>8} {'ref median':>10} {'mistakes max':>12}  "
        f"{'margin above':>12} {'margin below':>12} {'s/seed':>7}  worst mistake"
    )
    lines = [header, "-" * len(header)]
    for row in rows:
        name, worst = row.worst_mistake
        reference = f"{min(row.reference):>8.3f} {statistics.median(row.reference):>10.3f}"
        margins = f"{row.margin_above:>+12.3f} {row.margin_below:>+12.3f}"
        lines.append(
            f"{row.item:<42} {row.threshold:>9.3f} {reference} {worst:>12.3f}  {margins} "
            f"{row.seconds_per_seed:>7.1f}  {name}" + ("" if row.holds else "   << does not separate")
        )
    return "\n".join(lines)


def near_chance_table(rows: list[Calibration]) -> str:
    """Before training and with the recurrent layer reset: each run's highest accuracy, against chance_at_most."""
    header = f"{'item':<42} {'run':<24} {'before max':>10} {'reset max':>10} {'chance at most':>14}"
    lines = [header, "-" * len(header)]
    for row in rows:
        for label in row.before:
            before, reset = max(row.before[label], default=float("nan")), max(row.reset[label], default=float("nan"))
            chance = "-" if row.chance is None else f"{row.chance:.3f}"
            lines.append(f"{row.item:<42} {label:<24} {before:>10.3f} {reset:>10.3f} {chance:>14}")
    return "\n".join(lines)

"""`autograde calibrate`: evidence that each threshold separates right from wrong.

For every threshold item, the reference is trained over `calibration_seeds` seeds and
each known mistake that bears on it over the same seeds, with the very harness the
grading uses (in process: all of it is the grader's own code). A threshold holds when
the reference's minimum is above it and every mistake's maximum below it. Each run is
also measured before training and with its recurrent layer reset to its initial weights:
where the recipe has `chance_at_most`, the reference's maximum of both must stay at or under it.
All of these runs stop as gradings stop them (the recipe's stop rule, checks/thresholds.py `Stop`), every
calibration seed trained (the spread over them is the point).

The stop rule is proved, too: every student that bears on a threshold item (the reference, the known
mistakes, every variant of checks/variants.py and each file of the submission corpus, tests/corpus/)
is decided on the rubric's seeds as a grading decides it (early-stopped, the seeds the others made needless
left untrained) and with full-length trainings of every seed, and no item's verdict may differ between the two.
"""

import re
import statistics
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from autograder.checks import variants
from autograder.checks.compare import CheckFailure
from autograder.checks.thresholds import Measure, measures, shortfall
from autograder.locations import ROOT, SOLUTIONS
from autograder.rubric import Recipe, Rubric
from autograder.student import InProcess, StudentError
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
    return variants.of("SequenceClassifier")["C2"](model, tokens, lengths)


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
        "S1 no shift": _loss(variants.of("next_token_loss")["S1"]),
        "S2 shifted backwards": _loss(variants.of("next_token_loss")["S2"]),
    },
}
REFERENCE = {"classifier": _classifier(None), "pattern": _loss(language_model.next_token_loss)}


def calibrate(
    rubric: Rubric, seeds: int | None = None, progress: Callable[[str], None] = lambda _: None
) -> list[Calibration]:
    """Run every threshold item's reference and mistakes over the calibration seeds."""
    return [_calibration(recipe, seeds or recipe.calibration_seeds, progress) for recipe in rubric.recipes]


def mistakes_of(recipe: Recipe) -> list[str]:
    """The known mistakes calibrate trains against for this item."""
    padded = "max_length" in recipe.settings  # without padding the state after the padding is the right one
    return [label for label in MISTAKES[recipe.task] if padded or not label.startswith("C2")]


def checked(rubric: Rubric, seeds: int | None = None) -> list[str]:
    """What `calibrate` would check, a line per threshold item, training nothing: its threshold, its seeds, the
    mistakes it must stay above."""
    return [
        f"{recipe.name}: threshold {recipe.threshold:g} (the lesson's model: {recipe.lesson:g}), over "
        f"{seeds or recipe.calibration_seeds} seeds, against the reference and {', '.join(mistakes_of(recipe))}"
        for recipe in rubric.recipes
    ]


def _calibration(recipe: Recipe, count: int, progress: Callable[[str], None]) -> Calibration:
    progress(f"{recipe.name}: reference over {count} seeds")
    started = time.monotonic()
    found = {"reference": measures(REFERENCE[recipe.task], recipe, list(range(count)), False, every_seed=True)}
    seconds = (time.monotonic() - started) / count
    for label in mistakes_of(recipe):
        progress(f"{recipe.name}: {label}")
        found[label] = measures(MISTAKES[recipe.task][label], recipe, list(range(count)), False, every_seed=True)
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


# -- early stopping against full-length trainings: the same verdicts -------------------------------------
CORPUS = ROOT / "tests" / "corpus"  # the submission corpus (in the course's checkout; none where installed)
TRAINED = {"classifier": ("classifier", "SequenceClassifier"), "pattern": ("language_model", "next_token_loss")}
VARIANTS = {"classifier": variants.of("SequenceClassifier"), "pattern": variants.of("next_token_loss")}
UNREAD = {"classifier": {"mean", "top", "axis"}}  # options of mean and max pooling: the recipe pools the last state
HEADER = re.compile(r"#\s*module:\s*(\w+)\s+functions?:\s*([\w,]+)")


@dataclass(frozen=True)
class Verdicts:
    """One student's verdict on one item, as a grading decides it (early-stopped, seeds decided early) and
    with full-length trainings of every seed (no measures: its code raised or answered wrongly, which fails
    the item as the grading fails it)."""

    item: str
    student: str
    early: list[Measure]
    full: list[Measure]
    early_passes: bool
    full_passes: bool
    same_run: bool = False  # every seed trained to its last epoch: the full-length run is that very run

    @property
    def differs(self) -> bool:
        return self.early_passes != self.full_passes


def students(task: str, corpus=CORPUS) -> dict[str, InProcess]:
    """Everyone whose code bears on the task's items: the reference, the known mistakes, the variants, the corpus."""
    found = {"reference": REFERENCE[task], **MISTAKES[task]}
    module, name = TRAINED[task]
    for label in VARIANTS[task]:
        if not VARIANTS[task].options[label].keys() <= UNREAD.get(task, set()):
            found[f"variant {label}"] = _variant(task, VARIANTS[task][label])
    for path in sorted(corpus.glob("*/*.py")) if corpus.is_dir() else []:
        header = HEADER.match(path.read_text(encoding="utf-8"))
        if header and header[1] == module and name in header[2].split(","):
            found[f"corpus {path.parent.name}/{path.stem}"] = _corpus_file(path, module)
    return found


def _variant(task: str, function: Callable[..., Any]) -> InProcess:
    if task == "pattern":
        return _loss(function)
    return _classifier(lambda model, tokens, lengths=None: function(model, tokens, lengths))  # a method: binds


def _corpus_file(path, module: str) -> InProcess:
    """A corpus file as its grading sees it: each file (correct/, mistakes/, losses/) holds one function, after the
    reference module it changes."""
    text = path.read_text(encoding="utf-8")
    if path.parent.name in ("correct", "mistakes", "losses"):
        text = (SOLUTIONS / f"{module}.py").read_text(encoding="utf-8") + "\n\n" + text
    namespace = types.ModuleType(f"corpus_{module}")
    exec(compile(text, str(path), "exec"), namespace.__dict__)  # the course's own corpus, as the mistakes above
    return InProcess(namespace)


def compare(
    rubric: Rubric, corpus=CORPUS, progress: Callable[[str], None] = lambda _: None, only: str | None = None
) -> list[Verdicts]:
    """Each student's verdict on each threshold item (the rubric's seeds), early-stopped and full-length
    (`only`: the students whose label contains it)."""
    rows = []
    for recipe in rubric.recipes:
        for label, student in students(recipe.task, corpus).items():
            if only is None or only in label:
                progress(f"{recipe.name}: {label}, early-stopped and full-length")
                rows.append(_verdicts(recipe, label, student))
    return rows


def _verdicts(recipe: Recipe, label: str, student: InProcess) -> Verdicts:
    early, early_passes = _decided(student, recipe, full_length=False)
    last = recipe.settings["epochs"]
    if early and all(m.epochs == last for m in early):
        return Verdicts(recipe.name, label, early, early, early_passes, early_passes, same_run=True)
    # A seed that trained to its last epoch is its full-length run (a resumed training is exactly the
    # uninterrupted one, and each seed's training is its own): only the others are trained full-length.
    again = [seed for seed, m in zip(recipe.seeds, early, strict=True) if m.epochs != last] if early else None
    full, full_passes = _decided(student, recipe, full_length=True, seeds=again)
    if early and full:
        trained = dict(zip(again, full, strict=True))
        full = [trained.get(seed, m) for seed, m in zip(recipe.seeds, early, strict=True)]
        full_passes = shortfall(recipe.settings, full) is None
    return Verdicts(recipe.name, label, early, full, early_passes, full_passes)


def _decided(
    student: InProcess, recipe: Recipe, full_length: bool, seeds: list[int] | None = None
) -> tuple[list[Measure], bool]:
    """The seeds' measures (the rubric's seeds when None) and whether the item passes on them; no measures
    when the student's code fails the item."""
    try:
        found = measures(student, recipe, seeds, full_length=full_length)
    except (StudentError, CheckFailure):
        return [], False
    return found, shortfall(recipe.settings, found) is None


def verdict_table(rows: list[Verdicts]) -> str:
    """Each item and student: the verdicts, the medians and the epochs each early-stopped seed trained
    ("-": not needed, the others decided the verdict)."""
    header = f"{'item':<42} {'student':<44} {'early':>5} {'full':>5} {'median':>13}  epochs"
    lines = [header, "-" * len(header)]
    for row in rows:
        medians = f"{_median_learned(row.early)}/{_median_learned(row.full)}"
        epochs = ",".join(str(m.epochs) if m.needed else "-" for m in row.early)
        epochs += " (no early stop: one run)" if row.same_run else ""
        lines.append(
            f"{row.item:<42} {row.student[:44]:<44} {_shown(row.early_passes):>5} {_shown(row.full_passes):>5} "
            f"{medians:>13}  {epochs}" + ("   << verdict differs" if row.differs else "")
        )
    return "\n".join(lines)


def epochs_saved(rows: list[Verdicts]) -> float:
    """The fraction of the full-length epochs the early-stopped trainings ran, over all rows."""
    early = sum(m.epochs or 0 for row in rows for m in row.early)
    return early / max(1, sum(m.epochs or 0 for row in rows for m in row.full))


def seeds_not_needed(rows: list[Verdicts]) -> tuple[int, int]:
    """How many seed trainings the grading's rule left out (seeds decided early), of how many seeds in all."""
    return sum(not m.needed for row in rows for m in row.early), sum(len(row.early) for row in rows)


def _median_learned(found: list[Measure]) -> str:
    known = [m.learned for m in found if m.learned is not None]
    return f"{statistics.median(known):.3f}" if known else "-"


def _shown(passes: bool) -> str:
    return "pass" if passes else "fail"

"""Early stopping: a seed's training stops at the first checked epoch at which the grader's own accuracy
clears threshold + stop_margin, or at the recipe's last; the student's code has no say in it; the
calibration fails on any verdict that differs from full-length training; results.json keeps the epochs."""

from dataclasses import replace

import pytest
import torch

from autograder import calibrate, commands, rubric
from autograder.checks import findings, thresholds
from autograder.checks.thresholds import Measure, Stop
from autograder.runtime import training
from autograder.student import InProcess

RECIPES = rubric.load().recipes
CLASSIFIER = next(recipe for recipe in RECIPES if recipe.task == "classifier")
PATTERN = next(recipe for recipe in RECIPES if recipe.task == "pattern")


def _stop(recipe, **changed):
    return Stop.of({**recipe.settings, **changed})


def _stopped_at(stop, accuracies):
    """The epoch at which `stop` ends a training whose grader-measured accuracy after each epoch is given."""
    for epoch, accuracy in enumerate(accuracies, start=1):
        if stop.stops(epoch, accuracy if stop.checked(epoch) else None):
            return epoch
    raise AssertionError("the training never ended")


# -- the rule --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("recipe", RECIPES, ids=[recipe.aspect for recipe in RECIPES])
def test_it_gives_every_threshold_item_a_stop_margin_and_check_interval_in_the_rubric(recipe):
    assert recipe.settings["stop_margin"] > 0 and recipe.threshold + recipe.settings["stop_margin"] < 1
    assert 1 <= recipe.settings["check_every"] <= recipe.settings["epochs"]


def test_it_stops_at_the_first_epoch_that_clears_the_threshold_by_the_margin():
    stop = _stop(CLASSIFIER, epochs=6, check_every=1)
    level = CLASSIFIER.threshold + CLASSIFIER.settings["stop_margin"]
    just_under = level - 0.001
    assert _stopped_at(stop, [0.5, CLASSIFIER.threshold, just_under, level, 1.0, 1.0]) == 4


def test_it_runs_to_the_recipes_last_epoch_when_no_epoch_clears_it():
    stop = _stop(CLASSIFIER, epochs=6, check_every=1)
    assert _stopped_at(stop, [CLASSIFIER.threshold + CLASSIFIER.settings["stop_margin"] - 0.001] * 6) == 6


def test_it_only_checks_the_epochs_the_recipe_allows():
    stop = _stop(PATTERN, epochs=10, check_every=4)
    assert _stopped_at(stop, [1.0] * 10) == 4
    assert [stop.next_check(epoch) for epoch in (0, 4, 8)] == [4, 4, 2]


def test_it_runs_every_training_to_its_end_when_full_length_is_asked_or_no_margin_is_given():
    settings = {key: value for key, value in CLASSIFIER.settings.items() if key != "stop_margin"}
    for stop in (Stop.of(CLASSIFIER.settings, full_length=True), Stop.of(settings)):
        assert _stopped_at(stop, [1.0] * CLASSIFIER.settings["epochs"]) == CLASSIFIER.settings["epochs"]


def test_it_asks_for_full_length_only_through_the_graders_own_environment(monkeypatch):
    monkeypatch.delenv(thresholds.FULL_LENGTH, raising=False)
    assert not thresholds.full_length_asked()
    monkeypatch.setenv(thresholds.FULL_LENGTH, "1")
    assert thresholds.full_length_asked()


# -- the trainings, on short runs -----------------------------------------------------------------------
TINY = {"epochs": 3, "train_size": 64, "eval_size": 200, "batch_size": 32, "check_every": 1}


def _tiny(recipe, **changed):
    return replace(recipe, seeds=(0, 1), settings={**recipe.settings, **TINY, **changed})


def _rule_forward(self, tokens, lengths=None):
    """The task's rule written by hand: right on every row from the start, whatever the parameters."""
    again = (tokens[:, 1:] == tokens[:, :1]).any(dim=1).float()
    return torch.stack([1 - again, again], dim=1) * 10.0 + 0 * self.head.bias


class Counting(InProcess):
    """The reference's classifier, counting the calls to the worker and what they asked."""

    def __init__(self, kind=calibrate.classifier.SequenceClassifier):
        super().__init__(lambda dotted: {"classifier.SequenceClassifier": kind}[dotted])
        self.asked: list[tuple] = []

    def run(self, target, *args, **kwargs):
        self.asked.append((target, args[0] if target == "harness.train_epochs" else None))
        return super().run(target, *args, **kwargs)


def _runs(recipe):
    seeds = thresholds.GRADER_SEEDS[thresholds.kind(recipe.settings)]
    return {seed: thresholds.training_run(thresholds.data, recipe.settings, seed, seeds) for seed in recipe.seeds}


@pytest.mark.slow
def test_it_cannot_be_stopped_by_a_forward_that_is_right_whatever_it_learned():
    recipe = _tiny(CLASSIFIER, stop_margin=0.01)
    kind = type("SequenceClassifier", (calibrate.classifier.SequenceClassifier,), {"forward": _rule_forward})
    student = Counting(kind)
    found = thresholds.measures(student, recipe, full_length=False)
    assert [m.trained for m in found] == [1.0, 1.0], "its own forward is right on every row"
    assert [m.epochs for m in found] == [TINY["epochs"]] * 2, "the grader's forward on its parameters decides"
    trainings = [count for target, count in student.asked if target == "harness.train_epochs"]
    assert trainings == [1, 1, 1], "one call per checked epoch serves both seeds"


@pytest.mark.slow
def test_it_stops_each_seed_at_its_first_epoch_at_the_level_with_the_parameters_of_that_epoch():
    recipe = _tiny(CLASSIFIER, train_size=2000)
    runs = _runs(recipe)
    student = Counting()
    every = {seed: student.run("harness.trained_classifier", *run.args[:4], True).value for seed, run in runs.items()}
    ours = {seed: [thresholds._ours(recipe, seed, runs[seed], state) for state in every[seed]] for seed in runs}
    level = statistics_middle(ours)
    stop = replace(Stop.of(recipe.settings), level=level)
    stopped = thresholds.stopped_trainings(student, recipe, runs, stop)
    for seed, (state, epoch, _) in stopped.items():
        assert epoch == _stopped_at(stop, ours[seed])
        assert all(torch.equal(state[name], every[seed][epoch - 1][name]) for name in state), "resumed exactly"


def statistics_middle(accuracies: dict[int, list[float]]) -> float:
    """A level some epoch reaches but not the first of every seed: between the first epochs' and the best."""
    first = max(values[0] for values in accuracies.values())
    best = max(value for values in accuracies.values() for value in values)
    return (first + best) / 2 if best > first else best


@pytest.mark.slow
def test_it_stops_the_pattern_model_at_its_first_epoch_at_the_level():
    recipe = replace(PATTERN, seeds=(0,))
    student = calibrate.REFERENCE["pattern"]
    (early,) = thresholds.measures(student, recipe, full_length=False)
    run = thresholds.training_run(thresholds.data, recipe.settings, 0, thresholds.GRADER_SEEDS["pattern"])
    settings, tokens, inputs = run.args
    accuracies = []
    for model in thresholds.pattern_training(student, settings, tokens):
        accuracies.append(thresholds.pattern_accuracy(model, inputs, run.labels))
        if len(accuracies) == early.epochs:
            break
    level = recipe.threshold + recipe.settings["stop_margin"]
    assert early.epochs < recipe.settings["epochs"], "the reference clears the level before the last epoch"
    assert accuracies[-1] == early.trained >= level > max(accuracies[:-1])


def test_it_forgets_an_earlier_items_trainings_when_new_ones_start():
    training._TRAININGS[:] = [object()]
    assert training.train_epochs(None, 0, []) == [] and training._TRAININGS == []


# -- the record and the calibration ----------------------------------------------------------------------
def test_it_records_each_seeds_epochs_and_accuracy_in_the_items_measures():
    found = [Measure(0.9, 0.91, 0.5, 0.5, epochs) for epochs in (3, 6, 4)]
    with findings.recording() as record:
        thresholds._record(CLASSIFIER, found)
    assert record.measured["seed_epochs"] == [3, 6, 4]
    assert record.measured["seed_accuracies"] == [0.9] * 3
    assert record.measured["epochs"] == CLASSIFIER.settings["epochs"]


def _fake_measures(differing: str):
    """Measures without training: full-length ones fail the student `differing`, the rest pass."""

    def measures(student, recipe, seeds=None, full_length=None):
        fails = full_length and student is calibrate.students(recipe.task).get(differing)
        value = 0.0 if fails else 1.0
        return [Measure(value, value, 0.5, 0.5, 1) for _ in recipe.seeds]

    return measures


def test_it_lists_every_student_of_each_task_mistakes_variants_and_corpus():
    found = calibrate.students("classifier")
    assert {"reference", "first step", "variant C5"} <= set(found)
    assert any(label.startswith("corpus mistakes/C2") for label in found)
    assert any(label.startswith("corpus correct/SequenceClassifier_") for label in found)
    assert not any("S1" in label for label in found), "the pattern's loss does not bear on the classifier"


def test_it_fails_the_calibration_when_an_items_verdict_differs_from_full_length(monkeypatch, capsys):
    memo = {task: calibrate.students(task) for task in ("classifier", "pattern")}
    monkeypatch.setattr(calibrate, "students", lambda task, corpus=None: memo[task])
    monkeypatch.setattr(calibrate, "calibrate", lambda *args, **kwargs: [])
    monkeypatch.setattr(calibrate, "measures", _fake_measures("variant C5"))
    assert commands.calibrate_command(None) != commands.EXIT_OK
    shown = capsys.readouterr().out
    assert "differs: SequenceClassifier: learns the task: variant C5" in shown and "verdicts that differ: 2" in shown
    monkeypatch.setattr(calibrate, "measures", _fake_measures("nobody"))
    assert commands.calibrate_command(None) == commands.EXIT_OK


def test_it_writes_each_seeds_epochs_beside_its_accuracy_in_results_json(reference_result):
    from autograder.grading import writers

    graded, stopped_early, not_needed = rubric.load(), 0, 0
    for test in writers.gradescope(reference_result)["tests"]:
        function, aspect = test["name"].split(": ")
        recipe = graded.recipe(function, aspect.replace(" ", "_"))
        if recipe is not None:
            extra = test["extra_data"]
            assert len(extra["seed_epochs"]) == len(extra["seed_accuracies"]) == len(recipe.seeds)
            pairs = list(zip(recipe.seeds, extra["seed_epochs"], extra["seed_accuracies"], strict=True))
            assert extra["seeds_not_needed"] == [seed for seed, epochs, accuracy in pairs if accuracy is None]
            assert all((epochs == 0) == (accuracy is None) for _, epochs, accuracy in pairs), "not needed: not trained"
            trained = [epochs for epochs in extra["seed_epochs"] if epochs]
            assert all(1 <= epochs <= extra["epochs"] == recipe.settings["epochs"] for epochs in trained)
            stopped_early += sum(epochs < extra["epochs"] for epochs in trained)
            not_needed += len(extra["seeds_not_needed"])
    assert stopped_early, "the reference clears some item's stop level before the recipe's last epoch"
    assert not_needed, "two of the reference's seeds clear some item's level: its third seed is not needed"


def test_it_counts_a_student_whose_code_raises_as_failing_both_ways(monkeypatch):
    from autograder.student import Raised

    def raising(student, recipe, seeds=None, full_length=None):
        raise Raised("the grader's training run over your code raised", "AttributeError", "no rnn")

    monkeypatch.setattr(calibrate, "measures", raising)
    row = calibrate._verdicts(CLASSIFIER, "raises", calibrate.REFERENCE["classifier"])
    assert (row.early, row.early_passes, row.full_passes, row.differs) == ([], False, False, False)


def test_it_trains_full_length_only_the_seeds_that_stopped_early_or_were_not_needed(monkeypatch):
    asked = []
    last = CLASSIFIER.settings["epochs"]

    def measures(student, recipe, seeds=None, full_length=None):
        asked.append((seeds, full_length))
        if not full_length:  # seed 0 ran to its end short of the threshold, seed 1 stopped early, seed 2 not needed
            return [Measure(0.0, 0.0, 0.5, 0.5, last), Measure(1.0, 1.0, 0.5, 0.5, 1), thresholds.NOT_NEEDED]
        return [Measure(0.0, 0.0, 0.5, 0.5, last) for _ in seeds]

    monkeypatch.setattr(calibrate, "measures", measures)
    row = calibrate._verdicts(replace(CLASSIFIER, seeds=(0, 1, 2)), "stops early", calibrate.REFERENCE["classifier"])
    assert asked == [(None, False), ([1, 2], True)], "seed 0's run is its full-length run"
    assert [m.learned for m in row.full] == [0.0, 0.0, 0.0] and not row.early_passes and not row.full_passes
    assert calibrate.seeds_not_needed([row]) == (1, 3)
    assert calibrate.verdict_table([row]).endswith(f"{last},1,-"), "a seed not needed trained no epoch"


def test_it_trains_once_a_student_whose_seeds_all_ran_to_the_last_epoch(monkeypatch):
    asked = []

    def to_the_end(student, recipe, seeds=None, full_length=None):
        asked.append(full_length)
        return [Measure(0.5, 0.5, 0.5, 0.5, recipe.settings["epochs"]) for _ in recipe.seeds]

    monkeypatch.setattr(calibrate, "measures", to_the_end)
    row = calibrate._verdicts(CLASSIFIER, "never clears", calibrate.REFERENCE["classifier"])
    assert asked == [False] and row.same_run and row.full == row.early and not row.differs

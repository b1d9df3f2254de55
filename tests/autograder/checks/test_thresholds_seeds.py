"""Seeds decided early, in the threshold items: a seed the others made needless is not trained, a median the
seeds measured leave undecided has the rest trained and measured after all, full-length trains every seed,
and results.json and the feedback say which seeds were not needed.

The trainings here are scripted (no training runs): the worker's side returns the initial parameters and
the grader's accuracies after each epoch come from the test, so the rule's cases are exact and quick."""

from collections import Counter
from dataclasses import replace
from types import SimpleNamespace

import pytest

from autograder import rubric
from autograder.checks import findings, thresholds
from autograder.checks.thresholds import NOT_NEEDED, Measure, shortfall

RECIPES = rubric.load().recipes
CLASSIFIER = next(recipe for recipe in RECIPES if recipe.task == "classifier")
PATTERN = next(recipe for recipe in RECIPES if recipe.task == "pattern")
LAST = 3  # the scripted recipe's last epoch
RECIPE = replace(
    CLASSIFIER,
    seeds=(0, 1, 2),
    settings={**CLASSIFIER.settings, "seeds": [0, 1, 2], "epochs": LAST, "check_every": 1, "train_size": 64},
)
THRESHOLD, CHANCE = RECIPE.threshold, RECIPE.settings["chance_at_most"]
LEVEL = THRESHOLD + RECIPE.settings["stop_margin"]  # stops a training
SHORT = THRESHOLD - 0.1  # under the threshold: a training that ends there fails its seed
CLEARS_AT_1, CLEARS_AT_2, ENDS_SHORT = [LEVEL], [SHORT, LEVEL], [SHORT] * LAST
LEARNED = Measure(LEVEL, LEVEL, CHANCE - 0.05, CHANCE - 0.05)  # a seed that learned, near chance untrained
NOT_LEARNED = Measure(SHORT, SHORT, CHANCE - 0.05, CHANCE - 0.05)


class Worker:
    """The worker's side, scripted: a training call advances the seeds asked (their initial parameters go back)."""

    def __init__(self) -> None:
        self.epochs: Counter[int] = Counter()  # the epochs trained, per seed
        self.phase: list[int] = []  # the seeds of the current trainings, in the order of the call's `which`
        self.fresh_workers = 0

    def run(self, target, count, starts, which, timeout):
        assert target == "harness.train_epochs"
        if starts is not None:
            self.phase = [start[0]["seed"] for start in starts]
        for index in which:
            self.epochs[self.phase[index]] += count
        state = thresholds.initial_classifier(RECIPE.settings, 0).state_dict()
        return SimpleNamespace(value=[state for _ in which])

    def fresh(self, preload: tuple[str, ...] | None = None) -> None:
        self.fresh_workers += 1


@pytest.fixture
def graded(monkeypatch):
    """Grades RECIPE's seeds with the grader's accuracy after each epoch and the measures scripted per seed."""
    monkeypatch.delenv(thresholds.FULL_LENGTH, raising=False)

    def grade(ours: dict[int, list[float]], measured: dict[int, Measure], recipe=RECIPE):
        worker = Worker()
        at = lambda recipe, seed, run, state: ours[seed][min(worker.epochs[seed], len(ours[seed])) - 1]  # noqa: E731
        monkeypatch.setattr(thresholds, "_ours", at)
        monkeypatch.setattr(thresholds, "_classifier_measure", lambda student, recipe, seed, run, state: measured[seed])
        return worker, thresholds.measures(worker, recipe)

    return grade


def test_it_leaves_the_third_seed_untrained_when_two_cleared_the_level(graded):
    worker, found = graded({0: CLEARS_AT_1, 1: CLEARS_AT_2, 2: CLEARS_AT_1}, dict.fromkeys(RECIPE.seeds, LEARNED))
    assert worker.epochs == {0: 1, 1: 2}, "seed 2 never trained"
    assert found[2] is NOT_NEEDED and [m.epochs for m in found] == [1, 2, 0]
    assert shortfall(RECIPE.settings, found) is None is shortfall(RECIPE.settings, [LEARNED] * 3)


def test_it_trains_the_third_seed_when_one_cleared_and_one_ended_short(graded):
    measured = {0: LEARNED, 1: NOT_LEARNED, 2: LEARNED}
    worker, found = graded({0: CLEARS_AT_1, 1: ENDS_SHORT, 2: CLEARS_AT_2}, measured)
    assert worker.epochs == {0: 1, 1: LAST, 2: 2}
    assert all(m.needed for m in found) and worker.fresh_workers == 1, "one phase: trained, then measured"


def test_it_fails_on_two_seeds_that_ended_short_without_training_the_third(graded):
    worker, found = graded({seed: ENDS_SHORT for seed in RECIPE.seeds}, dict.fromkeys(RECIPE.seeds, NOT_LEARNED))
    assert worker.epochs == {0: LAST, 1: LAST}, "a failing submission trains two seeds of three"
    why = shortfall(RECIPE.settings, found)
    assert why is not None and "it needs" in why and _says_seed_2_was_not_needed(why)
    assert (shortfall(RECIPE.settings, [NOT_LEARNED] * 3) is None) is False


def test_it_trains_and_measures_the_rest_when_a_chance_median_is_undecided(graded):
    right_untrained = replace(LEARNED, before=CHANCE + 0.05)
    measured = {0: LEARNED, 1: right_untrained, 2: right_untrained}
    worker, found = graded({0: CLEARS_AT_1, 1: CLEARS_AT_1, 2: CLEARS_AT_2}, measured)
    assert worker.epochs == {0: 1, 1: 1, 2: 2} and worker.fresh_workers == 3, "phase 2 trains seed 2, then measures it"
    assert all(m.needed for m in found)
    why = shortfall(RECIPE.settings, found)
    assert why is not None and thresholds.BEFORE in why and "not needed" not in why


def test_it_trains_and_measures_the_rest_when_the_students_forward_leaves_the_learned_median_undecided(graded):
    own_forward_short = replace(LEARNED, trained=SHORT)  # the grader's forward cleared; the student's did not
    worker, found = graded({seed: CLEARS_AT_1 for seed in RECIPE.seeds}, {0: LEARNED, 1: own_forward_short, 2: LEARNED})
    assert worker.epochs == {0: 1, 1: 1, 2: 1} and all(m.needed for m in found)
    assert shortfall(RECIPE.settings, found) is None


def test_it_trains_every_seed_full_length_when_full_length_is_asked(graded, monkeypatch):
    monkeypatch.setenv(thresholds.FULL_LENGTH, "1")
    worker, found = graded({seed: CLEARS_AT_1 for seed in RECIPE.seeds}, dict.fromkeys(RECIPE.seeds, LEARNED))
    assert worker.epochs == dict.fromkeys(RECIPE.seeds, LAST) and all(m.needed for m in found)


def test_it_trains_every_seed_when_the_rubric_turns_the_rule_off(graded):
    off = replace(RECIPE, settings={**RECIPE.settings, "seeds_decided_early": False})
    worker, found = graded({seed: ENDS_SHORT for seed in RECIPE.seeds}, dict.fromkeys(RECIPE.seeds, NOT_LEARNED), off)
    assert worker.epochs == dict.fromkeys(RECIPE.seeds, LAST) and all(m.needed for m in found)


# -- the pattern model: the grader trains its seeds one after the other -----------------------------------
def _pattern(monkeypatch, learned: dict[int, float]) -> tuple[list[int], list[Measure]]:
    trained = []

    def measure(student, recipe, seed, stop):
        trained.append(seed)
        return Measure(learned[seed], None, 0.2, 0.2, stop.epochs)

    monkeypatch.setattr(thresholds, "pattern_measure", measure)
    return trained, thresholds.measures(None, PATTERN)


def test_it_trains_the_pattern_models_third_seed_only_when_the_first_two_disagree(monkeypatch):
    monkeypatch.delenv(thresholds.FULL_LENGTH, raising=False)
    above, below = PATTERN.threshold + 0.01, PATTERN.threshold - 0.01
    trained, found = _pattern(monkeypatch, {0: above, 1: above, 2: below})
    assert trained == [0, 1] and found[2] is NOT_NEEDED
    trained, found = _pattern(monkeypatch, {0: above, 1: below, 2: below})
    assert trained == [0, 1, 2] and shortfall(PATTERN.settings, found) is not None
    monkeypatch.setenv(thresholds.FULL_LENGTH, "1")
    assert _pattern(monkeypatch, {0: above, 1: above, 2: below})[0] == [0, 1, 2]


# -- what is written -------------------------------------------------------------------------------------
def test_it_records_a_seed_not_needed_as_null_with_no_epochs():
    with findings.recording() as record:
        thresholds._record(RECIPE, [replace(LEARNED, epochs=2), replace(LEARNED, epochs=4), NOT_NEEDED])
    assert record.measured["seed_accuracies"] == [round(LEVEL, 4)] * 2 + [None]
    assert record.measured["before_training"][2] is None and record.measured["seed_epochs"] == [2, 4, 0]
    assert record.measured["seeds_not_needed"] == [2] and record.measured["accuracy"] == round(LEVEL, 4)


def test_it_says_in_the_near_chance_feedback_which_seed_was_not_needed():
    right_untrained = replace(LEARNED, before=CHANCE + 0.05)
    why = shortfall(RECIPE.settings, [right_untrained, right_untrained, NOT_NEEDED])
    assert why is not None and thresholds.BEFORE in why and _says_seed_2_was_not_needed(why)


def _says_seed_2_was_not_needed(text):
    return "seed 2: not needed" in text and "Seed 2 was not needed: the seeds trained decided the median" in text

"""Seeds decided early, the rule alone: a median is decided by the seeds already on one side of its bound,
and the verdict it gives on them is the one every seed gives."""

import itertools
import statistics

from autograder import rubric
from autograder.checks import medians
from autograder.checks.thresholds import NOT_NEEDED, Measure

RECIPES = rubric.load().recipes
CLASSIFIER = next(recipe for recipe in RECIPES if recipe.task == "classifier")
THRESHOLD, CHANCE = CLASSIFIER.threshold, CLASSIFIER.settings["chance_at_most"]


def _at_least(value):
    return value >= THRESHOLD


def test_it_decides_a_median_of_three_on_two_seeds_on_the_same_side():
    above, below = THRESHOLD + 0.01, THRESHOLD - 0.01
    assert medians.side([above, THRESHOLD, None], 3, _at_least) is True, "the threshold itself is reached"
    assert medians.side([below, below, None], 3, _at_least) is False
    assert medians.side([above, below, None], 3, _at_least) is None
    assert medians.side([above, None, None], 3, _at_least) is None


def test_it_gives_on_the_seeds_it_decides_on_the_verdict_of_every_seed():
    values = [THRESHOLD - 0.1, THRESHOLD, THRESHOLD + 0.1]
    for count in (3, 5):
        for every in itertools.product(values, repeat=count):
            for trained in itertools.product((True, False), repeat=count):
                known = [value if kept else None for value, kept in zip(every, trained, strict=True)]
                decided = medians.side(known, count, _at_least)
                assert decided in (None, statistics.median(every) >= THRESHOLD), (every, known)
                if decided is not None:
                    kept = [value for value in known if value is not None]
                    assert (statistics.median(kept) >= THRESHOLD) is decided, "the median of the seeds trained agrees"


def test_it_trains_two_seeds_at_first_and_the_third_only_when_they_end_on_both_sides():
    assert medians.still_training(cleared=0, short=0, count=3) == 2
    assert medians.still_training(cleared=1, short=0, count=3) == 1
    assert medians.still_training(cleared=1, short=1, count=3) == 1
    assert medians.still_training(cleared=2, short=0, count=3) == 0
    assert medians.still_training(cleared=0, short=2, count=3) == 0


def _measure(learned, before, reset):
    return Measure(learned, learned, before, reset)


def test_it_needs_every_median_of_the_verdict_decided_the_near_chance_ones_too():
    passes, near, far = THRESHOLD + 0.05, CHANCE - 0.05, CHANCE + 0.05
    settings = CLASSIFIER.settings
    assert medians.verdict_decided(settings, [_measure(passes, near, near)] * 2 + [NOT_NEEDED], 3)
    assert medians.verdict_decided(settings, [_measure(passes, far, near)] * 2 + [NOT_NEEDED], 3), "decided: fails"
    assert not medians.verdict_decided(settings, [_measure(passes, near, near), _measure(passes, far, near)], 3)
    assert not medians.verdict_decided(settings, [_measure(passes, near, near), _measure(passes, near, far)], 3)
    assert not medians.verdict_decided(settings, [_measure(passes, near, near), _measure(0.0, near, near)], 3)


def test_it_reads_no_near_chance_median_where_the_recipe_has_no_chance_bound():
    pattern = next(recipe for recipe in RECIPES if recipe.task == "pattern")
    assert "chance_at_most" not in pattern.settings
    found = [Measure(pattern.threshold, None, 0.9, 0.9), Measure(pattern.threshold, None, 0.1, 0.9)]
    assert medians.verdict_decided(pattern.settings, found, 3)

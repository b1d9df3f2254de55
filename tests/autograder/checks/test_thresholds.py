"""Threshold items: separated right from wrong with margin, deterministic, independent of the thread count."""

from dataclasses import replace

import pytest

from autograder import calibrate, rubric
from autograder.checks.thresholds import accuracy
from autograder.student import InProcess

RECIPES = rubric.load().recipes
IDS = [f"{recipe.function}.{recipe.aspect}" for recipe in RECIPES]


@pytest.mark.parametrize("recipe", RECIPES, ids=IDS)
def test_it_keeps_every_threshold_number_in_the_rubric(recipe):
    assert (recipe.function, f"test_{recipe.aspect}") in {
        (item.function, item.test_id[1]) for item in rubric.load().items
    }
    assert {"threshold", "seeds", "epochs", "calibration_seeds", "lesson", "timeout"} <= set(recipe.settings)
    assert len(recipe.seeds) % 2 == 1, "an odd number of seeds gives a real median"
    assert recipe.calibration_seeds >= 10


@pytest.mark.slow
def test_it_still_separates_the_reference_from_every_known_mistake_with_margin():
    rows = calibrate.calibrate(rubric.load(), seeds=3)
    print(calibrate.table(rows))
    for row in rows:
        assert row.margin_above > 0, f"{row.item}: the reference fell to {min(row.reference):.3f}"
        assert row.margin_below > 0, f"{row.item}: {row.worst_mistake.mistake} reached {row.worst_mistake.accuracy:.3f}"


# one epoch is enough to see whether the floating-point order changes a result; the margins are calibrated
SHORT = {"epochs": 1, "train_size": 2000}


@pytest.mark.slow
@pytest.mark.parametrize("recipe", RECIPES, ids=IDS)
def test_it_trains_the_same_on_every_run_and_with_one_or_two_threads(recipe):
    recipe = replace(recipe, settings={**recipe.settings, **(SHORT if recipe.task == "classifier" else {})})
    reference = calibrate.REFERENCE[recipe.task]
    first = accuracy(reference, recipe, 0)
    again = accuracy(reference, recipe, 0)
    two_threads = accuracy(InProcess(reference.resolve, threads=2), recipe, 0)
    assert first == again
    # with two threads the floating-point order may differ: the difference must stay far inside the margins
    print(f"{recipe.name}: one thread {first:.4f}, two threads {two_threads:.4f}")
    assert abs(first - two_threads) < 0.02

"""Threshold items: separated right from wrong with margin, deterministic, independent of the thread count,
and decided by the grader from parameters: a model whose accuracy does not come from what it learned earns 0."""

from dataclasses import replace

import pytest
import torch

from autograder import calibrate, rubric
from autograder.checks import thresholds
from autograder.checks.compare import CheckFailure
from autograder.checks.thresholds import Measure, shortfall
from autograder.student import InProcess

RECIPES = rubric.load().recipes
IDS = [f"{recipe.function}.{recipe.aspect}" for recipe in RECIPES]


@pytest.mark.parametrize("recipe", RECIPES, ids=IDS)
def test_it_keeps_every_threshold_number_in_the_rubric(recipe):
    assert (recipe.function, recipe.aspect) in {(item.function, item.aspect) for item in rubric.load().items}
    assert {"threshold", "seeds", "epochs", "calibration_seeds", "lesson", "timeout"} <= set(recipe.settings)
    assert len(recipe.seeds) % 2 == 1, "an odd number of seeds gives a real median"
    assert recipe.calibration_seeds >= 10


@pytest.mark.slow
def test_it_still_separates_the_reference_from_every_known_mistake_with_margin():
    rows = calibrate.calibrate(rubric.load(), seeds=3)
    print(calibrate.table(rows), calibrate.near_chance_table(rows), sep="\n\n")
    for row in rows:
        assert row.near_chance_margin is None or row.near_chance_margin > 0, f"{row.item}: {row.before}, {row.reset}"
        assert set(row.before) == {"reference", *row.mistakes}, "every run is measured before training too"
        assert row.margin_above > 0, f"{row.item}: the reference fell to {min(row.reference):.3f}"
        assert row.margin_below > 0, f"{row.item}: {row.worst_mistake.mistake} reached {row.worst_mistake.accuracy:.3f}"


# one epoch is enough to see whether the floating-point order changes a result; the margins are calibrated
SHORT = {"epochs": 1, "train_size": 2000}


@pytest.mark.slow
@pytest.mark.parametrize("recipe", RECIPES, ids=IDS)
def test_it_trains_the_same_on_every_run_and_with_one_or_two_threads(recipe):
    recipe = replace(recipe, settings={**recipe.settings, **(SHORT if recipe.task == "classifier" else {})})
    reference = calibrate.REFERENCE[recipe.task]
    first = thresholds.measures(reference, recipe, [0])[0]
    again = thresholds.measures(reference, recipe, [0])[0]
    two_threads = thresholds.measures(InProcess(reference.resolve, threads=2), recipe, [0])[0].learned
    assert first.reference in (None, first.trained), "the reference's forward reads the reference's parameters alike"
    first, again = first.learned, again.learned
    assert first == again
    # with two threads the floating-point order may differ: the difference must stay far inside the margins
    print(f"{recipe.name}: one thread {first:.4f}, two threads {two_threads:.4f}")
    assert abs(first - two_threads) < 0.02


# -- the decision, from the measures -------------------------------------------------------------------
CLASSIFIER = next(recipe for recipe in RECIPES if recipe.task == "classifier")
PATTERN = next(recipe for recipe in RECIPES if recipe.task == "pattern")


def _measures(trained, reference=None, before=0.5, reset=0.5, seeds=3):
    return [Measure(trained, reference, before, reset) for _ in range(seeds)]


def _above(recipe):
    return min(1.0, recipe.threshold + 0.05)


def test_it_gives_every_classifier_item_a_near_chance_bound_under_its_threshold():
    for recipe in RECIPES:
        if recipe.function == "SequenceClassifier":
            assert 0.5 < recipe.settings["chance_at_most"] < recipe.threshold


def test_it_passes_a_model_that_learned_and_is_near_chance_before_training_and_reset():
    assert shortfall(CLASSIFIER.settings, _measures(_above(CLASSIFIER), _above(CLASSIFIER))) is None


def test_it_fails_a_model_right_before_any_training_however_high_its_accuracy():
    high = CLASSIFIER.settings["chance_at_most"] + 0.05
    why = shortfall(CLASSIFIER.settings, _measures(1.0, 1.0, before=high))
    assert why is not None and "before any training" in why and "does not come from what" in why


def test_it_fails_a_model_right_with_its_recurrent_layer_reset():
    high = CLASSIFIER.settings["chance_at_most"] + 0.05
    why = shortfall(CLASSIFIER.settings, _measures(1.0, 1.0, reset=high))
    assert why is not None and "recurrent layer reset" in why


def test_it_decides_near_chance_on_the_median_so_one_seed_does_not_fail_a_correct_model():
    high = CLASSIFIER.settings["chance_at_most"] + 0.05
    found = [*_measures(_above(CLASSIFIER), _above(CLASSIFIER))[:2], Measure(_above(CLASSIFIER), 1.0, high, high)]
    assert shortfall(CLASSIFIER.settings, found) is None


def test_it_counts_the_lower_of_the_students_forward_and_the_references():
    low = CLASSIFIER.threshold - 0.2
    why = shortfall(CLASSIFIER.settings, _measures(1.0, low))
    assert why is not None and "read by the lesson's forward" in why
    assert shortfall(CLASSIFIER.settings, _measures(low, 1.0)) is not None


def test_it_reports_the_shortfall_of_a_model_that_learned_too_little():
    why = shortfall(CLASSIFIER.settings, _measures(CLASSIFIER.threshold - 0.1, CLASSIFIER.threshold - 0.1))
    assert why is not None and "it needs" in why and "read by the lesson's forward" not in why


def test_it_only_reports_the_near_chance_measures_of_the_pattern_model_which_is_the_graders_own():
    assert "chance_at_most" not in PATTERN.settings
    assert shortfall(PATTERN.settings, _measures(_above(PATTERN), before=0.9, reset=0.9)) is None


def test_it_takes_back_only_the_parameters_of_the_given_init():
    model = thresholds.initial_classifier(CLASSIFIER.settings, 0)
    state = thresholds.initial_classifier(CLASSIFIER.settings, 1).state_dict()
    assert torch.equal(thresholds.loaded(model, state).head.bias, state["head.bias"])
    for wrong in ({**state, "rule": torch.zeros(1)}, {**state, "head.bias": torch.zeros(3)}, [1, 2], None):
        with pytest.raises(CheckFailure):
            thresholds.loaded(thresholds.initial_classifier(CLASSIFIER.settings, 0), wrong)


def test_it_resets_the_recurrent_layer_alone():
    trained = thresholds.initial_classifier(CLASSIFIER.settings, 1).state_dict()
    initial = thresholds.initial_classifier(CLASSIFIER.settings, 0).state_dict()
    reset = thresholds.with_reset_recurrence(trained, initial)
    for name, value in reset.items():
        assert value is (initial[name] if name.startswith("rnn.") else trained[name])


# -- the measures, on short runs (the verdicts need the rubric's full runs) -------------------------------
TINY = {"epochs": 2, "train_size": 64, "eval_size": 200, "batch_size": 32}


def _tiny(recipe):
    return replace(recipe, seeds=(0,), settings={**recipe.settings, **TINY})


def _rule_forward(self, tokens, lengths=None):
    """The task's rule written by hand: does the first digit come again? No recurrent model at all."""
    again = (tokens[:, 1:] == tokens[:, :1]).any(dim=1).float()
    return torch.stack([1 - again, again], dim=1) * 10.0 + 0 * self.head.bias


def _classifier_with(forward):
    kind = type("SequenceClassifier", (calibrate.classifier.SequenceClassifier,), {"forward": forward})
    return InProcess(lambda dotted: {"classifier.SequenceClassifier": kind}[dotted])


@pytest.mark.slow
def test_it_measures_a_rule_written_by_hand_as_right_before_any_training_and_fails_it():
    (found,) = thresholds.measures(_classifier_with(_rule_forward), _tiny(CLASSIFIER))
    assert found.trained == found.before == found.reset == 1.0
    assert found.reference < 0.7, "the reference's forward reads parameters that learned nothing"
    assert "before any training" in shortfall(CLASSIFIER.settings, [found])


@pytest.mark.slow
def test_it_gives_back_the_parameters_after_every_epoch_when_asked():
    recipe = _tiny(CLASSIFIER)
    run = thresholds.training_run(thresholds.data, recipe.settings, 0, thresholds.GRADER_SEEDS["classifier"])
    student = calibrate.REFERENCE["classifier"]
    epochs = student.run("harness.trained_classifier", *run.args[:4], True).value
    last = student.run("harness.trained_classifier", *run.args[:4]).value
    assert len(epochs) == TINY["epochs"]
    assert all(torch.equal(epochs[-1][name], last[name]) for name in last)
    assert not torch.equal(epochs[0]["head.weight"], last["head.weight"])


def _loss_that_rewrites_its_model(model, tokens, pad_id=None):
    with torch.no_grad():
        model.head.weight.fill_(7.0)  # what a loss does to its model stays in the worker
    return calibrate.language_model.next_token_loss(model, tokens, pad_id)


@pytest.mark.slow
def test_it_trains_the_pattern_model_in_the_grader_with_the_gradients_alone():
    settings = {**PATTERN.settings, "seed": 0, "epochs": 2}
    student = InProcess(lambda dotted: {"language_model.next_token_loss": _loss_that_rewrites_its_model}[dotted])
    tokens = thresholds.data.make_pattern(seed=3000)
    models = list(thresholds.pattern_training(student, settings, tokens))
    assert len(models) == 2
    assert (models[-1].head.weight.abs() < 1.0).all()
    assert not torch.equal(models[-1].head.weight, thresholds.pattern_model(settings).head.weight)

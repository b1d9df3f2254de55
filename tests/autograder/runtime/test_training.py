"""The grader's training recipe (also `python -m exercises.check_training`): a loss that trains nothing is said."""

import pytest
import torch
import torch.nn.functional as F

from autograder.runtime import training
from solutions import language_model

RECIPE = {"seed": 0, "vocab": 6, "embed": 4, "hidden": 5, "learning_rate": 0.01, "epochs": 2}  # small: no threshold
TOKENS = torch.randint(1, 6, (4, 9), generator=torch.Generator().manual_seed(0))


def loss_from_numbers(model, tokens, pad_id=None):
    """S6 as students write it: the loss's number made a tensor again, requires_grad=True so backward runs."""
    logits, _ = model(tokens[:, :-1])
    value = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1)).item()
    return torch.tensor(value, requires_grad=True)


def train(loss) -> torch.Tensor:
    resolve = {"language_model.next_token_loss": loss}.__getitem__
    return training.train_pattern_model(resolve, RECIPE, TOKENS, TOKENS[:, :-1])


def test_it_says_the_loss_carries_no_gradient_before_any_guess_from_the_accuracy():
    with pytest.raises(TypeError, match="carries no gradient back to the model"):
        train(loss_from_numbers)


def test_it_trains_with_a_loss_that_carries_gradients():
    assert train(language_model.next_token_loss).shape == TOKENS[:, :-1].shape


# -- set_forget_bias's answer stays out of the worker: the grader sends the opened gate's biases with each run -
def test_a_run_sent_with_the_opened_gate_starts_where_the_grader_opens_it_itself():
    """The worker writes in the biases sent (no forget_gate.py there): the model starts as the grader's own."""
    from autograder.checks import thresholds
    from autograder.rubric import load
    from autograder.student import in_package

    recipe = next(recipe for recipe in load().recipes if recipe.function == "SequenceClassifier")
    run = thresholds.training_run(thresholds.data, recipe.settings, 3, thresholds.GRADER_SEEDS["classifier"])
    initial = thresholds.initial_classifier(recipe.settings, 3).state_dict()
    sent = training.with_opened_gate(run, initial)
    first = next(training.classifier_epochs(in_package("solutions"), *sent.args[:4]))
    again = next(training.classifier_epochs(in_package("solutions"), *run.args[:4]))  # opened here, the old way
    assert set(sent.args[0][training.OPENED]) == {name for name in initial if name.startswith("rnn.bias")}
    assert all(torch.equal(first.state_dict()[name], again.state_dict()[name]) for name in initial)


# -- the student's check stops by the grader's rule, measuring between epochs (python -m exercises.check_training) --
def test_a_training_measured_after_every_epoch_ends_as_the_one_never_measured():
    """The check measures its held-out rows between epochs: its last epoch is the uninterrupted run's."""
    resolve = {"language_model.next_token_loss": language_model.next_token_loss}.__getitem__
    recipe = {**RECIPE, "epochs": 5}
    run = training.Run("harness.train_pattern_model", (recipe, TOKENS, TOKENS[:, :-1]), TOKENS[:, 1:])
    model = None
    for model in training.epochs_of(resolve, run):
        training.held_out_accuracy(resolve, run, model)
    uninterrupted = training.train_pattern_model(resolve, recipe, TOKENS, TOKENS[:, :-1])
    assert torch.equal(training.predict_pattern(model, TOKENS[:, :-1]), uninterrupted)


def test_the_stop_rule_stops_at_the_first_checked_epoch_at_the_level_or_at_the_last():
    stop = training.Stop.of({"epochs": 6, "threshold": 0.7, "stop_margin": 0.05, "check_every": 2})
    assert stop.level == pytest.approx(0.75)
    assert [epoch for epoch in range(1, 7) if stop.checked(epoch)] == [2, 4, 6]
    assert not stop.stops(2, 0.74) and stop.stops(4, 0.75) and stop.stops(6, 0.1)
    assert training.Stop.of({"epochs": 6, "threshold": 0.7}).level is None  # no stop_margin: never early

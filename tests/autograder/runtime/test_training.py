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


# -- TODO 6's answer stays out of the worker: the grader sends the opened gate's biases with each run ----------
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

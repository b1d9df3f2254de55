"""train_step's checks, run in process on rewrites of the reference: what they catch, what they accept."""

import pytest
import torch
import torch.nn.functional as F
from in_process import feedback, lost_items, named, student
from torch import nn

from autograder.todos.train_step import checks
from solutions import classifier as reference_classifier


# -- train_step: either way of zeroing, and K3 when the gradients pile up ------------------------
def stepper(zero: str):
    def train_step(model, batch, optimizer, clip=1.0):
        tokens, lengths, labels = batch
        if zero == "optimizer":
            optimizer.zero_grad()
        elif zero == "model":
            model.zero_grad()
        F.cross_entropy(model(tokens, lengths), labels).backward()
        if clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), clip)
        used = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()]))
        optimizer.step()
        if zero == "after the step":
            optimizer.zero_grad()
        return float(used)

    return train_step


@pytest.mark.parametrize("zero", ["optimizer", "model"])
def test_it_accepts_optimizer_zero_grad_and_model_zero_grad_alike(zero):
    submission = student(classifier__train_step=stepper(zero))
    checks.check_train_step_update(submission)
    checks.check_train_step_clipped_norm(submission)


def test_it_names_k3_when_train_step_never_zeroes_the_gradients_and_keeps_the_norm_it_reports_honestly():
    submission = student(classifier__train_step=stepper("never"))
    assert feedback(checks.check_train_step_update, submission).startswith("[K3] Your gradients are never zeroed")
    checks.check_train_step_clipped_norm(submission)  # it reports the norm of the step it took


def test_it_fails_a_train_step_that_zeroes_only_after_stepping_as_the_public_test_with_stale_gradients_does():
    submission = student(classifier__train_step=stepper("after the step"))
    text = feedback(checks.check_train_step_update, submission)
    assert "gradients left at 0.5 before the first" in text, text


def test_it_names_both_mistakes_of_a_train_step_with_softmax_before_the_loss_and_no_zero_grad():
    def train_step(model, batch, optimizer, clip=1.0):
        tokens, lengths, labels = batch
        F.cross_entropy(F.softmax(model(tokens, lengths), dim=-1), labels).backward()
        if clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), clip)
        used = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()]))
        optimizer.step()
        return float(used)

    text = feedback(checks.check_train_step_update, student(classifier__train_step=train_step))
    first, _, second, *_ = text.splitlines()
    assert first.startswith("[K3] Your gradients are never zeroed"), text
    assert second.startswith("[S5] Your train_step applies softmax before cross_entropy"), text
    checks.check_train_step_clipped_norm(student(classifier__train_step=train_step))


def test_it_fails_a_train_step_that_reports_what_clip_grad_norm_returns_on_the_norm_only_naming_k4():
    def train_step(model, batch, optimizer, clip=1.0):
        tokens, lengths, labels = batch
        optimizer.zero_grad()
        F.cross_entropy(model(tokens, lengths), labels).backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), clip if clip is not None else float("inf"))
        optimizer.step()
        return float(norm)

    submission = student(classifier__train_step=train_step)
    checks.check_train_step_update(submission)
    text = feedback(checks.check_train_step_clipped_norm, submission)
    assert text.startswith("[K4] You return what clip_grad_norm_ returns"), text


# -- legal inputs: judged where the same steps with an ordinary input are right ---------------------------
STEP_ITEMS = ("update", "clipped_norm", "legal_inputs")


def step_items_lost(train_step) -> dict[str, str]:
    return lost_items("train_step", STEP_ITEMS, student(classifier__train_step=train_step))


def test_it_costs_only_legal_inputs_to_a_train_step_that_clips_at_1_when_clip_is_none_and_says_it_clipped():
    def train_step(model, batch, optimizer, clip=1.0):
        return reference_classifier.train_step(model, batch, optimizer, 1.0 if clip is None else clip)

    found = step_items_lost(train_step)
    assert list(found) == ["legal_inputs"], found
    text = found["legal_inputs"]
    assert text.startswith("This input is legal: clip=None (clip None, 1 step): clip=None skips the clipping"), text
    assert "Your step was clipped to a norm of 1.0000" in text and named(text) == [], text


def test_it_speaks_of_clipping_with_clip_none_only_when_the_step_is_the_whole_gradient_made_shorter():
    def train_step(model, batch, optimizer, clip=1.0):  # clip=None: each entry clipped, the direction changed
        if clip is not None:
            return reference_classifier.train_step(model, batch, optimizer, clip)
        tokens, lengths, labels = batch
        optimizer.zero_grad()
        F.cross_entropy(model(tokens, lengths), labels).backward()
        nn.utils.clip_grad_value_(model.parameters(), 0.01)
        used = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()]))
        optimizer.step()
        return float(used)

    found = step_items_lost(train_step)
    assert list(found) == ["legal_inputs"], found
    assert "clip=None" in found["legal_inputs"] and "clipped to a norm" not in found["legal_inputs"], found


def test_it_costs_only_legal_inputs_to_a_train_step_that_refuses_clip_none():
    def train_step(model, batch, optimizer, clip=1.0):
        if clip is None:
            raise TypeError("clip must be a number")
        return reference_classifier.train_step(model, batch, optimizer, clip)

    found = step_items_lost(train_step)
    assert list(found) == ["legal_inputs"], found
    assert "refused this one" in found["legal_inputs"] and "clip must be a number" in found["legal_inputs"], found

"""sample's checks, run in process on rewrites of the reference: what they catch, what they accept."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from in_process import lost_items, student

from autograder.todos.sample import checks
from solutions import language_model as reference_language_model


# -- sample: the model's mode and device, as the docstring allows -------------------------------
def test_it_accepts_a_sample_that_calls_model_eval_and_finds_the_device_from_the_parameters():
    def sample(model, start, steps, temperature, generator):
        model.eval()
        device = next(model.parameters()).device
        tokens, state = [start], None
        with torch.no_grad():
            for _ in range(steps):
                logits, state = model(torch.tensor([[tokens[-1]]], device=device), state)
                probs = F.softmax(logits[0, -1] / temperature, dim=-1)
                tokens.append(torch.multinomial(probs, 1, generator=generator).item())
        return tokens

    submission = student(language_model__sample=sample)
    checks.check_sample_values(submission)
    checks.check_sample_no_grad(submission)


# -- legal inputs: refusing one costs that item alone, and names nothing ------------------------------
SAMPLE_ITEMS = ("values", "no_grad", "legal_inputs")


@pytest.mark.parametrize("legacy", [False, True])
def test_it_names_t4_for_a_sample_drawn_by_numpy_seeded_from_the_generator(legacy):
    def sample(model, start, steps, temperature, generator):
        if legacy:
            np.random.seed(generator.initial_seed())
        rng = np.random if legacy else np.random.default_rng(generator.initial_seed())
        tokens, state = [start], None
        with torch.no_grad():
            for _ in range(steps):
                logits, state = model(torch.tensor([[tokens[-1]]]), state)
                probs = torch.softmax(logits[0, -1] / temperature, dim=-1).double().numpy()
                tokens.append(int(rng.choice(len(probs), p=probs / probs.sum())))
        return tokens

    found = lost_items("sample", SAMPLE_ITEMS, student(language_model__sample=sample))
    assert list(found) == ["values"], found
    assert found["values"].startswith("[T4] Your draws come from NumPy seeded with the generator's seed")


def test_it_costs_only_legal_inputs_to_a_sample_that_refuses_no_steps_or_a_temperature_above_one():
    def sample(model, start, steps, temperature, generator):
        if steps < 1 or not 0 < temperature <= 1:
            raise ValueError(f"steps must be positive and temperature in (0, 1], got {steps}, {temperature}")
        return reference_language_model.sample(model, start, steps, temperature, generator)

    found = lost_items("sample", SAMPLE_ITEMS, student(language_model__sample=sample))
    assert list(found) == ["legal_inputs"], found
    assert "That input is legal (start 4, 0 steps, temperature 1.0): steps is a count" in found["legal_inputs"]

"""Checks for TODO 6 (set_forget_bias)."""

import copy

import torch
from torch import nn

from autograder.checks import variants
from autograder.checks.compare import fail, with_diagnosis
from autograder.checks.inputs import seeded_module
from solutions import initialisation as reference

SINGLE = [((3, 4), {}, 1.0), ((2, 5), {}, 2.5), ((4, 3), {}, None)]  # None: the default value
STACKED = [((3, 4), {"num_layers": 2, "bidirectional": True}, 1.0), ((2, 3), {"num_layers": 3}, -0.5)]


def _effective(lstm: nn.LSTM) -> dict[str, torch.Tensor]:
    """What the gates see: bias_ih + bias_hh per layer and direction, and every weight."""
    state = lstm.state_dict()
    seen = {name: value for name, value in state.items() if name.startswith("weight")}
    for name in state:
        if name.startswith("bias_ih"):
            seen[name.replace("bias_ih", "bias")] = state[name] + state[name.replace("bias_ih", "bias_hh")]
    return seen


def _run(student, size: tuple, options: dict, value: float | None, seed: int):
    lstm = seeded_module(nn.LSTM, *size, batch_first=True, seed=seed, **options)
    original = copy.deepcopy(lstm)
    args = (lstm,) if value is None else (lstm, value)
    call = student.run("initialisation.set_forget_bias", *args)
    return original, lstm, call, args[1:]


def _first_difference(got: dict, expected: dict, hidden: int) -> str | None:
    for name, value in expected.items():
        bad = ~torch.isclose(got[name], value, atol=1e-6, rtol=0)
        if bad.any():
            index = int(bad.flatten().nonzero()[0])
            if name.startswith("weight"):
                return f"{name} changed; only the biases should"
            block = ("input", "forget", "cell", "output")[index // hidden]
            real = name.replace("bias", "bias_ih") + " + " + name.replace("bias", "bias_hh")
            return (
                f"the {block} gate's effective bias ({real}) at entry {index} is "
                f"{float(got[name].flatten()[index]):.4f}; expected {float(value.flatten()[index]):.4f}"
            )
    return None


def _diagnose(original: nn.LSTM, got: dict, extra: tuple) -> str | None:
    for key, variant in variants.SET_FORGET_BIAS.items():
        mistake = _effective(variant(copy.deepcopy(original), *extra))
        if all(torch.allclose(got[name], value, atol=1e-6) for name, value in mistake.items()):
            return key
    return None


def _check_values(student, cases: list) -> None:
    for seed, (size, options, value) in enumerate(cases):
        original, lstm, _, extra = _run(student, size, options, value, seed)
        expected = _effective(reference.set_forget_bias(copy.deepcopy(original), *extra))
        got = _effective(lstm)
        problem = _first_difference(got, expected, lstm.hidden_size)
        if problem is not None:
            layers = "".join(f", {key}={option}" for key, option in options.items())
            shown = f"nn.LSTM({size[0]}, {size[1]}{layers}), value {value if value is not None else 'default (1.0)'}"
            fail(with_diagnosis(_diagnose(original, got, extra), f"set_forget_bias: {problem} ({shown})."))


def check_set_forget_bias_forget_block(student) -> None:
    """The forget gate's effective bias becomes the value; nothing else changes."""
    _check_values(student, SINGLE)


def check_set_forget_bias_all_layers_and_directions(student) -> None:
    """Every layer and both directions of a stacked bidirectional LSTM are set."""
    _check_values(student, STACKED)


def check_set_forget_bias_in_place(student) -> None:
    """The forget bias is set in place: the same module comes back, holding the same Parameter objects."""
    for seed, (size, options, value) in enumerate(STACKED):
        _, lstm, call, _ = _run(student, size, options, value, seed)
        if not call.effects[0].same_parameters:
            fail(with_diagnosis("F4", "set_forget_bias: after the call the LSTM holds new bias Parameters."))
        if call.value is not lstm:
            fail("set_forget_bias must return the very LSTM it was given (end with `return lstm`).")
    _check_values(student, STACKED)  # returning the LSTM untouched is not setting it in place

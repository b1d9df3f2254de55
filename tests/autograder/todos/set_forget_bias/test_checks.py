"""set_forget_bias's checks, run in process on rewrites of the reference: what they catch, what they accept."""

import torch
from in_process import feedback, lost_items, named

from autograder.student import InProcess
from autograder.todos.set_forget_bias import checks
from solutions import initialisation as reference_initialisation


# -- set_forget_bias: a pair, a mistake and something else, nothing written ---------------------------
def forget(*, zero_others: bool, both: bool, weight: bool = False):
    def set_forget_bias(lstm, value=1.0):
        hidden = lstm.hidden_size
        with torch.no_grad():
            for name, parameter in lstm.named_parameters():
                if name.startswith("bias"):
                    if zero_others:
                        parameter.zero_()
                    parameter[hidden : 2 * hidden] = value if both or name.startswith("bias_ih") else 0.0
                elif weight and name.startswith("weight_hh"):
                    parameter[0, 0] = 5.0
        return lstm

    return InProcess({"set_forget_bias": set_forget_bias})


def test_it_names_both_mistakes_of_a_forget_bias_set_in_both_biases_with_the_other_gates_zeroed():
    text = feedback(checks.check_set_forget_bias_forget_block, forget(zero_others=True, both=True))
    assert [line[:5] for line in text.splitlines() if line.startswith("[")] == ["[F2] ", "[F5] "], text
    checks.check_set_forget_bias_all_layers_and_directions(forget(zero_others=True, both=True))
    checks.check_set_forget_bias_in_place(forget(zero_others=True, both=True))


def test_it_names_the_mistake_that_explains_the_blocks_it_touches_and_says_what_else_differs():
    submission = forget(zero_others=False, both=True, weight=True)
    text = feedback(checks.check_set_forget_bias_forget_block, submission)
    assert text.startswith("[F2] Both bias_ih and bias_hh got the value"), text
    assert "besides that, weight_hh_l0 changed; only the biases should" in text, text


def test_it_fails_in_place_and_all_layers_for_a_set_forget_bias_that_writes_nothing():
    def untouched(lstm, value=1.0):
        return lstm

    submission = InProcess({"set_forget_bias": untouched})
    assert "wrote nothing into the LSTM's biases" in feedback(checks.check_set_forget_bias_in_place, submission)
    text = feedback(checks.check_set_forget_bias_all_layers_and_directions, submission)
    assert "changed no bias" in text, text


# -- legal inputs: refusing one costs that item alone, and names nothing ------------------------------
FORGET_ITEMS = ("forget_block", "all_layers_and_directions", "in_place", "legal_inputs")


def test_it_costs_only_legal_inputs_to_a_set_forget_bias_that_refuses_a_value_not_above_zero():
    def set_forget_bias(lstm, value=1.0):
        if value <= 0:
            raise ValueError(f"value must be positive, got {value}")
        return reference_initialisation.set_forget_bias(lstm, value)

    found = lost_items("set_forget_bias", FORGET_ITEMS, InProcess({"set_forget_bias": set_forget_bias}))
    assert list(found) == ["legal_inputs"], found
    text = found["legal_inputs"]
    assert text.startswith("set_forget_bias raised ValueError: value must be positive, got 0.0"), text
    assert "That input is legal (nn.LSTM(3, 4), value 0.0): any value is" in text and named(text) == [], text


def test_it_explains_a_write_into_the_biases_with_autograd_on_and_names_f3_from_the_call_made_without_it():
    def set_forget_bias(lstm, value=1.0):  # no torch.no_grad(), and layer 0 only (F3)
        hidden = lstm.hidden_size
        lstm.bias_ih_l0[hidden : 2 * hidden] = value
        lstm.bias_hh_l0[hidden : 2 * hidden] = 0.0
        return lstm

    found = lost_items("set_forget_bias", FORGET_ITEMS, InProcess({"set_forget_bias": set_forget_bias}))
    assert set(found) == set(FORGET_ITEMS), found  # as written it sets nothing: every item is lost
    for aspect, text in found.items():
        assert text.startswith("set_forget_bias raised RuntimeError: a view of a leaf Variable"), text
        assert "`with torch.no_grad():`" in text, text
        assert named(text) == (["F3"] if aspect == "all_layers_and_directions" else []), text
    assert "does what this item asks: that write is all that is wrong" in found["forget_block"]
    assert torch.is_grad_enabled()  # the calls made with autograd off leave it on for whatever runs next

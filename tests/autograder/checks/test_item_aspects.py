"""Each rubric item grades its own aspect: the items every known mistake loses, and why it loses each.

Every variant of autograder/variants.py (a mistake of the catalogue, in each of its forms) stands in
for its function in the reference, and every check of that function runs on it in process. The
table says which items it loses; each loss is justified by the mistake. A mistake in the values
costs the values items; the aspect items (the loop and the step written by hand, the initial state,
the gradients, skipping the padding, every layer and direction, in place, no grad, the norm
reported) keep their points unless the mistake is in that aspect. The threshold items train a model
and are left out here: they truly depend on the values (the corpus grades them, `autograde
calibrate` keeps the known mistakes below them). Every item lost names the mistake.
"""

import re

import pytest

from autograder import rubric
from autograder.checks import (
    baseline,
    catalogue,
    classifier,
    initialisation,
    language_model,
    padding,
    recurrence,
    variants,
)
from autograder.checks.compare import CheckFailure
from autograder.student import InProcess, StudentError, in_package
from solutions import classifier as reference_classifier

CHECKS = (recurrence, padding, initialisation, language_model, classifier, baseline)
TARGETS = {
    "rnn_forward": "recurrence.rnn_forward",
    "lstm_step": "recurrence.lstm_step",
    "encode_packed": "padding.encode_packed",
    "gather_final": "padding.gather_final",
    "masked_mean": "padding.masked_mean",
    "set_forget_bias": "initialisation.set_forget_bias",
    "next_token_loss": "language_model.next_token_loss",
    "sample": "language_model.sample",
    "SequenceClassifier.forward": "classifier.SequenceClassifier.forward",
    "train_step": "classifier.train_step",
    "bag_of_counts": "baseline.bag_of_counts",
}
NAMED = re.compile(r"^\[([A-Z]\d)\] ", re.MULTILINE)

VALUES = "its values differ from the reference's"
AXIS = "the loop walks the batch: on a batch whose size is not its length it fails, or gives (length, batch, hidden)"
RAISES = "packing time-major fails on these batches (the lengths do not match the batch)"
SORTED = "pack_padded_sequence raises on lengths that are not sorted (enforce_sorted=True left on)"
STEPS = "the length is read from the batch axis: on a batch whose size is not its length the output is misshapen"
NUMPY_ZEROS = "its NumPy zero state is float64: a float32 input without h0 breaks it"

# (function, variant) -> {item aspect: why the mistake loses it}; every other item of the function passes
LOSES: dict[tuple[str, str], dict[str, str]] = {
    ("rnn_forward", "R1:ih"): {"output": VALUES, "final_state": VALUES},
    ("rnn_forward", "R1:hh"): {"output": VALUES, "final_state": VALUES},
    ("rnn_forward", "R1"): {"output": VALUES, "final_state": VALUES},
    ("rnn_forward", "R2"): {
        "output": VALUES,
        "final_state": VALUES,
        "initial_state": "each step restarts from h0, so a run continued from its own state does not continue it",
    },
    ("rnn_forward", "R3"): {"output": VALUES, "final_state": VALUES},
    ("rnn_forward", "R3:ih"): {"output": VALUES, "final_state": VALUES},
    ("rnn_forward", "R4"): {"output": AXIS, "final_state": AXIS, "initial_state": AXIS, "gradients": AXIS},
    ("rnn_forward", "R4:rows"): {"output": AXIS, "final_state": AXIS, "initial_state": AXIS, "gradients": AXIS},
    ("rnn_forward", "R4:steps"): {"output": STEPS, "final_state": STEPS, "initial_state": STEPS, "gradients": STEPS},
    ("rnn_forward", "R5"): {"final_state": "h_n is the state after the first step"},
    ("rnn_forward", "R6"): {"initial_state": "h0 is ignored: the output is the same with it as without"},
    ("rnn_forward", "R8"): {"legal_inputs": "its zero state is float32: a float64 input without h0 breaks it"},
    ("rnn_forward", "R8:numpy"): {
        "output": NUMPY_ZEROS,
        "final_state": NUMPY_ZEROS,
        "initial_state": NUMPY_ZEROS,
        "writes_the_loop": NUMPY_ZEROS,
        "legal_inputs": "the ordinary float32 input the legal ones are judged against breaks it",
    },
    ("rnn_forward", "R7"): {"output": "the loop is right, but its output is stacked (length, batch, hidden)"},
    ("rnn_forward", "L3:inputs"): {
        "initial_state": "it writes each step's state into the caller's h0",
        "gradients": "writing into h0 changes the caller's tensor (and breaks its backward)",
    },
    ("lstm_step", "L1"): {"values": VALUES},
    ("lstm_step", "L1:tensorflow"): {"values": VALUES},
    ("lstm_step", "L3"): {
        "values": "it writes the new cell into the caller's c",
        "gradients": "writing into c changes what autograd saved of it: backward raises",
    },
    ("lstm_step", "L2"): {"values": VALUES},
    ("lstm_step", "L2:no_old"): {"values": VALUES},
    ("lstm_step", "L4"): {"values": VALUES},
    ("encode_packed", "P1"): {
        "final_state": VALUES,
        "output": VALUES,
        "skips_padding": "the layer runs over the padding, so the padding changes its results",
    },
    ("encode_packed", "P1:masked"): {
        "final_state": VALUES,
        "skips_padding": "the layer runs over the padding, so the padding changes its final state",
    },
    ("encode_packed", "P2"): {"final_state": "the rows come back sorted", "output": "the rows come back sorted"},
    ("encode_packed", "P2:enforce_sorted"): {"final_state": SORTED, "output": SORTED},  # the padding: judged sorted
    ("encode_packed", "P3"): {"final_state": RAISES, "output": RAISES, "skips_padding": RAISES},
    ("encode_packed", "P3:unpacked"): {"output": "the output comes back (length, batch, hidden)"},
    ("encode_packed", "P4"): {"final_state": "h_n is the output's last step, padding for every short row"},
    ("encode_packed", "P4:row"): {"final_state": "h_n is the output's last row, not a state per row"},
    ("encode_packed", "P5"): {"output": "the output stops at the longest row"},
    ("encode_packed", "G5:h_n"): {"legal_inputs": "h_n.squeeze(): a batch of one row (or hidden size 1) loses an axis"},
    ("gather_final", "G1"): {"values": VALUES},
    ("gather_final", "G2"): {"values": VALUES},
    ("gather_final", "G2:clamped"): {"values": VALUES},
    ("gather_final", "G5"): {"legal_inputs": "a batch of one row or a hidden size of 1 loses an axis"},
    ("masked_mean", "G3"): {"values": VALUES},
    ("masked_mean", "G3:plain"): {"values": VALUES},
    ("masked_mean", "G4"): {"values": VALUES},
    ("masked_mean", "L3:inputs"): {"values": "it zeroes the padding in the caller's own output"},
    ("masked_mean", "R8:mask"): {"legal_inputs": "its NumPy mask is float64: a float32 mean comes back float64"},
    ("set_forget_bias", "F1"): {"forget_block": VALUES},
    ("set_forget_bias", "F1:last"): {"forget_block": VALUES},
    ("set_forget_bias", "F1:cell"): {"forget_block": VALUES},
    ("set_forget_bias", "F2"): {"forget_block": VALUES},
    ("set_forget_bias", "F3"): {"all_layers_and_directions": "the layers after the first are left as they were"},
    ("set_forget_bias", "F3:forward"): {"all_layers_and_directions": "the reverse directions are left as they were"},
    ("set_forget_bias", "F3:first"): {"all_layers_and_directions": "only layer 0 forward is set"},
    ("set_forget_bias", "F4"): {"in_place": "the LSTM holds new bias Parameters"},
    ("set_forget_bias", "F5"): {"forget_block": VALUES},
    ("set_forget_bias", "F5:hh"): {"forget_block": VALUES},
    ("set_forget_bias", "F5:zeroed"): {"forget_block": VALUES},
    ("next_token_loss", "S1"): {"values": VALUES, "padding": VALUES},
    ("next_token_loss", "S1:trimmed"): {"values": VALUES, "padding": VALUES},
    ("next_token_loss", "S2"): {"values": VALUES, "padding": VALUES},
    ("next_token_loss", "S3"): {"values": VALUES, "padding": VALUES},
    ("next_token_loss", "S3:unflattened"): {"values": VALUES, "padding": VALUES},
    ("next_token_loss", "S4"): {"padding": "the padding targets are counted (without pad_id it is right)"},
    ("next_token_loss", "S4:denominator"): {"padding": "the padding targets are counted in the mean"},
    ("next_token_loss", "S4:inputs"): {"padding": "the mask comes from the inputs: the first pad target counts"},
    ("next_token_loss", "S5"): {"values": VALUES, "padding": VALUES},
    ("next_token_loss", "S5:nll"): {"values": VALUES, "padding": VALUES},
    ("next_token_loss", "S6"): {"gradients": "the loss is a number made a tensor again: no gradient reaches the model"},
    ("next_token_loss", "L3:inputs"): {
        "padding": "it marks the padding targets -100 in the caller's tokens",
        "gradients": "writing into the tokens the embedding read breaks its backward",
    },
    ("sample", "T1"): {"values": VALUES},
    ("sample", "T2"): {"values": VALUES},
    ("sample", "T3"): {"values": VALUES},
    ("sample", "T4"): {"values": "the draws do not come from the generator given"},
    ("sample", "T4:numpy"): {"values": "the draws come from NumPy, seeded with the generator's seed"},
    ("sample", "T4:numpy_legacy"): {"values": "the draws come from NumPy, seeded with the generator's seed"},
    ("sample", "T5"): {"no_grad": "the model runs with autograd on"},
    ("SequenceClassifier.forward", "C1"): {"last_pooling": VALUES, "padded_batch": VALUES},
    ("SequenceClassifier.forward", "C1:pooled"): {"mean_max_pooling": VALUES, "padded_batch": VALUES},
    ("SequenceClassifier.forward", "C1:transposed"): {
        "last_pooling": VALUES,
        "mean_max_pooling": VALUES,
        "padded_batch": VALUES,
    },
    ("SequenceClassifier.forward", "C2"): {"padded_batch": "on a padded batch it reads the state after the padding"},
    ("SequenceClassifier.forward", "C3"): {"padded_batch": "on a padded batch its mean covers the padding"},
    ("SequenceClassifier.forward", "C4"): {"padded_batch": "on a padded batch its max covers the padding"},
    ("SequenceClassifier.forward", "C4:zeroed"): {"padded_batch": "on a padded batch a padding of 0 competes"},
    ("SequenceClassifier.forward", "C5"): {
        "last_pooling": "every row is read one step early",
        "padded_batch": "every row is read one step early",
    },
    ("SequenceClassifier.forward", "C5:indexed"): {
        "last_pooling": "every row is read one step early",
        "padded_batch": "every row is read one step early",
    },
    ("SequenceClassifier.forward", "L3:inputs"): {
        "padded_batch": "it makes the caller's lengths the last steps' indices in place (lengths -= 1)",
    },
    ("train_step", "K1"): {"update": "the step uses the unclipped gradient"},
    ("train_step", "K2"): {"update": "the step uses the gradient clipped entry by entry"},
    ("train_step", "K3"): {"update": "the step adds the earlier steps' gradients"},
    ("train_step", "K4"): {"clipped_norm": "it reports the norm before clipping, not the step it took"},
    ("train_step", "S5:step"): {"update": "the step follows the gradient of the loss of probabilities"},
    ("bag_of_counts", "B1"): {"values": VALUES},
    ("bag_of_counts", "B1:ten"): {"values": VALUES},
    ("bag_of_counts", "B1:eight"): {"values": VALUES},
    ("bag_of_counts", "B1:nine_zero"): {"values": VALUES},
    ("bag_of_counts", "B2"): {"values": "a batch without a 9 gets fewer columns"},
    ("bag_of_counts", "B3"): {"values": "its counts are integers where the features are floats"},
}
GRADED = rubric.load()


def student(function: str, variant) -> InProcess:
    """The reference with `function` replaced by `variant` (the classifier's forward in a subclass)."""
    base = in_package("solutions")
    target = TARGETS[function]
    kind = type("SequenceClassifier", (reference_classifier.SequenceClassifier,), {"forward": variant})

    def resolve(dotted: str):
        if dotted == target:
            return variant
        if function == "SequenceClassifier.forward" and dotted == "classifier.SequenceClassifier":
            return kind
        return base(dotted)

    return InProcess(resolve)


def items(function: str) -> list[rubric.Item]:
    graded = function.split(".")[0]
    return [item for item in GRADED.items if item.function == graded and GRADED.recipe(graded, item.aspect) is None]


def lost(function: str, submission: InProcess) -> dict[str, str]:
    """Item aspect -> its feedback, for every item the submission loses."""
    found = {}
    for item in items(function):
        name = f"check_{item.function}_{item.aspect}"
        check = getattr(next(module for module in CHECKS if hasattr(module, name)), name)
        try:
            check(submission)
        except (CheckFailure, StudentError) as failure:
            found[item.aspect] = str(failure)
    return found


def test_the_table_holds_every_variant_and_only_items_of_its_function():
    every = {(function, key) for function, table in variants.BY_FUNCTION.items() for key in table}
    assert set(LOSES) == every
    for (function, _), losses in LOSES.items():
        assert losses and set(losses) <= {item.aspect for item in items(function)}


@pytest.mark.parametrize(("function", "key"), list(LOSES), ids=[f"{f}-{k}" for f, k in LOSES])
def test_each_known_mistake_loses_exactly_the_items_it_explains_and_names_itself_on_each(function, key):
    found = lost(function, student(function, variants.BY_FUNCTION[function][key]))
    assert set(found) == set(LOSES[function, key]), {aspect: text.splitlines()[0] for aspect, text in found.items()}
    mistakes = catalogue.ids(key)
    for aspect, feedback in found.items():
        assert NAMED.findall(feedback) == mistakes, f"{aspect} does not name [{key}]:\n{feedback}"


def test_the_reference_loses_no_item():
    for function in TARGETS:
        assert lost(function, InProcess(in_package("solutions"))) == {}, function


# values-only mistakes, and the aspect items of their function they keep (the "Done when")
ASPECTS_KEPT = {
    ("rnn_forward", "R1:hh"): ("writes_the_loop", "initial_state", "gradients", "legal_inputs"),
    ("rnn_forward", "R4"): ("writes_the_loop", "legal_inputs"),  # judged on a batch as long as its rows
    ("rnn_forward", "R7"): ("final_state", "initial_state", "gradients", "writes_the_loop", "legal_inputs"),
    ("rnn_forward", "R8"): ("output", "final_state", "initial_state", "gradients", "writes_the_loop"),  # float32
    ("lstm_step", "L2"): ("writes_the_step", "gradients", "legal_inputs"),
    ("lstm_step", "L4"): ("writes_the_step", "gradients", "legal_inputs"),
    ("set_forget_bias", "F2"): ("all_layers_and_directions", "in_place", "legal_inputs"),
    ("next_token_loss", "S5"): ("gradients", "legal_inputs"),
    ("sample", "T4"): ("no_grad", "legal_inputs"),
    ("sample", "T4:numpy"): ("no_grad", "legal_inputs"),
    ("train_step", "K3"): ("clipped_norm", "legal_inputs"),
    ("train_step", "K1"): ("clipped_norm", "legal_inputs"),  # clip=None asks for no clipping: K1 clips nothing either
    # a row of length 1 makes C5 ask gather for index -1, but C5 shows on every batch: the value items take it
    ("SequenceClassifier.forward", "C5"): ("legal_inputs", "mean_max_pooling"),
    ("SequenceClassifier.forward", "C2"): ("legal_inputs", "last_pooling"),
    ("encode_packed", "P4"): ("output", "skips_padding", "legal_inputs"),
    ("encode_packed", "P2:enforce_sorted"): ("skips_padding", "legal_inputs"),  # judged on its rows sorted
    ("encode_packed", "G5:h_n"): ("final_state", "output", "skips_padding"),  # batches of two rows or more
    ("gather_final", "G1"): ("legal_inputs",),
    ("gather_final", "G5"): ("values",),
    ("masked_mean", "G3"): ("legal_inputs",),
    ("masked_mean", "R8:mask"): ("values",),  # its values are right, in float64
}


@pytest.mark.parametrize(("function", "key"), list(ASPECTS_KEPT), ids=[f"{f}-{k}" for f, k in ASPECTS_KEPT])
def test_a_mistake_in_the_values_keeps_the_aspect_items(function, key):
    found = lost(function, student(function, variants.BY_FUNCTION[function][key]))
    assert found, f"{key} loses nothing: it is no mistake"
    assert set(ASPECTS_KEPT[function, key]).isdisjoint(found), sorted(found)


# mistakes made at once in one function: each is named, however many (not only pairs)
AT_ONCE = [
    ("SequenceClassifier.forward", "C2+C3+C4"),
    ("rnn_forward", "R1:hh+R5+R6"),
    ("rnn_forward", "R1+R6"),  # R1 raises on most inputs; h0 is judged on square ones, where R6 shows
    ("rnn_forward", "R1+R5"),  # R1's shape error and the first state, named from the square input beside it
    ("rnn_forward", "R1+R8"),  # R1's shape error on ordinary inputs; the float64 legal input names R8
    ("rnn_forward", "R4:steps+R8"),
    ("lstm_step", "L1+L4"),
    ("sample", "T1+T2+T4"),
    ("sample", "T1+T4:numpy"),
    ("bag_of_counts", "B1+B3"),
    ("bag_of_counts", "B2+B3"),
    ("SequenceClassifier.forward", "C3+L3:inputs"),  # the mean over the padding and the lengths changed in place
    ("SequenceClassifier.forward", "C1+C3"),  # the last row's logits of the wrong shape do not hide the mean's mistake
    ("train_step", "K1+K3"),
    ("train_step", "K3+K4"),
    ("masked_mean", "G3+L3:inputs"),  # a wrong mean and the caller's output changed: both named, on one item
    ("encode_packed", "P2:enforce_sorted+P4"),  # the packing raises on unsorted lengths; run sorted, h_n shows P4
    ("encode_packed", "P3:unpacked+P5"),  # unpacked time-major to the longest row: both named from the shapes
    ("masked_mean", "G3+R8:mask"),  # the values name G3, the float32 legal input R8 (with G3, which gives them)
]


@pytest.mark.parametrize(("function", "key"), AT_ONCE, ids=[f"{f}-{k}" for f, k in AT_ONCE])
def test_every_mistake_of_a_combination_is_named(function, key):
    found = lost(function, student(function, variants.BY_FUNCTION[function][key]))
    assert found, f"{key} loses nothing"
    named = {mistake for feedback in found.values() for mistake in NAMED.findall(feedback)}
    assert named == set(catalogue.ids(key)), {aspect: text.splitlines()[0] for aspect, text in found.items()}

"""PyTorch's exceptions in teaching words: each kind of error the table knows, from PyTorch's own message."""

from collections.abc import Callable

import pytest
import torch

from autograder.checks import errors

MAX_LINE_LENGTH = 200  # a line of feedback (tests/corpus/test_corpus.py keeps every failed item's lines to it)


def in_place_change_autograd_needs() -> None:
    gates = torch.sigmoid(torch.randn(3, 5, requires_grad=True))
    gates[:, :2] = torch.tanh(gates[:, :2])  # the candidate written over the sigmoid's own output
    gates.sum().backward()


def in_place_change_of_a_parameter() -> None:
    torch.nn.Parameter(torch.zeros(4))[1:3].fill_(1.0)


def view_of_transposed_memory() -> None:
    torch.randn(3, 4).t().view(12)


def float32_state_meets_float64_input() -> None:
    torch.zeros(2, 5) @ torch.randn(5, 5, dtype=torch.float64)


def float64_input_in_a_float32_layer() -> None:
    torch.nn.Linear(4, 5)(torch.randn(2, 4, dtype=torch.float64))


def weight_not_transposed() -> None:
    torch.randn(3, 4) @ torch.randn(5, 4)


def index_past_the_end() -> None:
    torch.randn(3, 4)[torch.arange(3), torch.tensor([1, 4, 2])]


def token_past_the_vocabulary() -> None:
    torch.nn.Embedding(10, 3)(torch.tensor([12]))


def batch_and_time_swapped() -> None:
    torch.randn(2, 3, 4) + torch.randn(3, 2, 4)


def numpy_of_a_tensor_in_the_graph() -> None:
    torch.randn(2, 3, requires_grad=True).exp().numpy()


def result_cut_off_from_autograd() -> None:
    torch.tensor(torch.randn(3, requires_grad=True).sum().item(), requires_grad=False).backward()


def a_model_without_the_lessons_head() -> int:
    return torch.nn.Sequential(torch.nn.Embedding(6, 4), torch.nn.Linear(4, 6)).head.out_features


RAISING: dict[Callable[[], None], str] = {
    in_place_change_autograd_needs: "in-place change autograd needs",
    in_place_change_of_a_parameter: "in-place change of a leaf that requires grad",
    view_of_transposed_memory: "view of non-contiguous memory",
    float32_state_meets_float64_input: "dtype mismatch",
    float64_input_in_a_float32_layer: "dtype mismatch",
    weight_not_transposed: "shapes of a matrix product",
    index_past_the_end: "index out of range",
    token_past_the_vocabulary: "index out of range",
    batch_and_time_swapped: "shapes of an elementwise operation",
    numpy_of_a_tensor_in_the_graph: "NumPy inside autograd",
    result_cut_off_from_autograd: "result cut off from autograd",
    a_model_without_the_lessons_head: "attribute the object does not have",
}


def message_of(code: Callable[[], None]) -> str:
    with pytest.raises(Exception) as raised:
        code()
    return str(raised.value)


@pytest.mark.parametrize("code", RAISING, ids=[code.__name__ for code in RAISING])
def test_it_explains_each_kind_of_error_from_pytorchs_own_message(code):
    found = errors.explaining(message_of(code))
    assert found is not None, f"no row explains {message_of(code)!r}"
    assert found[0].kind == RAISING[code]


def test_it_names_the_operation_whose_output_was_changed_and_the_sizes_that_do_not_fit():
    assert "backward needs the output of Sigmoid as it was computed" in errors.explain(
        message_of(in_place_change_autograd_needs)
    )
    assert "A's columns must equal B's rows, and here they are 4 and 5" in errors.explain(
        message_of(weight_not_transposed)
    )
    assert "dimension 1 has 3 and 2" in errors.explain(message_of(batch_and_time_swapped))
    assert "your code reads .head, which this object lacks" in errors.explain(
        message_of(a_model_without_the_lessons_head)
    )


def test_it_explains_no_message_of_the_students_own_nor_pythons():
    assert errors.explain("x must be (batch, length, input), got (3, 4)") is None
    assert errors.explain("rnn_forward() missing 1 required positional argument: 'bias_hh'") is None
    assert errors.explain("") is None


@pytest.mark.parametrize("code", RAISING, ids=[code.__name__ for code in RAISING])
def test_each_line_it_adds_fits_a_line_of_feedback(code):
    message = message_of(code)
    assert len(f"SequenceClassifier raised RuntimeError: {errors.headline(message)}") <= MAX_LINE_LENGTH
    assert len(errors.MEANING + errors.explain(message)) <= MAX_LINE_LENGTH


def test_its_headline_leaves_out_pytorchs_hint_and_cuts_a_long_message_where_a_clause_or_a_word_ends():
    message = message_of(in_place_change_autograd_needs)
    assert "Hint" in message
    assert errors.headline(message) == (
        "one of the variables needed for gradient computation has been modified by an inplace operation ..."
    )
    assert errors.headline("word " * 40) == "word " * 23 + "word ..."  # no clause: cut at the last whole word
    assert errors.headline("mat1 and mat2 shapes cannot be multiplied (3x4 and 5x4)\nmore") == (
        "mat1 and mat2 shapes cannot be multiplied (3x4 and 5x4)"
    )


def test_it_ships_the_table_row_for_row_as_patterns_and_explanations():
    assert errors.shipped() == [[row.pattern, row.text] for row in errors.EXPLANATIONS]

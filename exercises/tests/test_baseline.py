"""Public tests for baseline.py: bag_of_counts (the bag of counts) and fit_baseline (the order-blind baseline).

Run them with `python -m pytest exercises/tests/test_baseline.py`.
"""

import numpy as np
import torch

from exercises import baseline
from exercises.data import make_sequences

# ---------------------------------------------------------------- TODO · bag_of_counts


def test_bag_of_counts_returns_an_n_by_9_float_array():
    """bag_of_counts returns a numpy array of shape (n, 9) holding floats, one column per digit 1..9."""
    tokens, _ = make_sequences(5, seed=0)
    counts = baseline.bag_of_counts(tokens)
    assert isinstance(counts, np.ndarray), f"return a numpy array, got {type(counts).__name__}"
    assert counts.shape == (5, 9), f"expected (n, 9) = (5, 9), got {counts.shape}"
    assert np.issubdtype(counts.dtype, np.floating), f"expected float counts, got dtype {counts.dtype}"


def test_bag_of_counts_counts_a_small_example_by_hand():
    """Row (1, 1, 2, 0, 0) has two 1s and one 2; row (9, 9, 9, 5, 0) has one 5 and three 9s; 0 is not counted."""
    tokens = torch.tensor([[1, 1, 2, 0, 0], [9, 9, 9, 5, 0]])
    expected = np.array(
        [
            # 1  2  3  4  5  6  7  8  9
            [2, 1, 0, 0, 0, 0, 0, 0, 0],
            [0, 0, 0, 0, 1, 0, 0, 0, 3],
        ],
        dtype=float,
    )
    np.testing.assert_array_equal(baseline.bag_of_counts(tokens), expected)


def test_bag_of_counts_ignores_the_padding_zero():
    """Each row's counts add up to the number of non-zero tokens in it: padding is not a digit."""
    tokens = torch.tensor([[0, 0, 0, 0], [3, 0, 0, 0], [4, 4, 0, 0], [9, 8, 7, 6]])
    counts = baseline.bag_of_counts(tokens)
    np.testing.assert_array_equal(counts.sum(axis=1), [0, 1, 2, 4])


def test_bag_of_counts_has_nine_columns_even_when_the_batch_holds_no_9():
    """A batch whose largest digit is 5 still gets nine columns: one per digit 1..9, whatever the batch holds."""
    tokens = torch.tensor([[1, 5, 0], [2, 2, 3]])
    counts = baseline.bag_of_counts(tokens)
    assert counts.shape == (2, 9), f"expected (n, 9) = (2, 9) for a batch without a 9, got {counts.shape}"
    np.testing.assert_array_equal(counts, [[1, 0, 0, 0, 1, 0, 0, 0, 0], [0, 2, 1, 0, 0, 0, 0, 0, 0]])


def test_bag_of_counts_accepts_a_numpy_array_as_well():
    """A numpy array of tokens gives the same counts as the tensor."""
    tokens, _ = make_sequences(6, seed=3)
    np.testing.assert_array_equal(baseline.bag_of_counts(tokens.numpy()), baseline.bag_of_counts(tokens))


# ---------------------------------------------------------------- TODO · fit_baseline


def test_fit_baseline_returns_an_accuracy_between_0_and_1():
    """On the lesson's task, fit_baseline returns a Python float in [0, 1]."""
    train_tokens, train_labels = make_sequences(400, seed=0)
    val_tokens, val_labels = make_sequences(200, seed=1)
    accuracy = baseline.fit_baseline(train_tokens, train_labels, val_tokens, val_labels)
    assert type(accuracy) is float, f"return a Python float (float(...)), got {type(accuracy).__name__}"
    assert 0.0 <= accuracy <= 1.0, f"an accuracy lies between 0 and 1, got {accuracy}"


def test_fit_baseline_fits_on_the_training_rows_and_scores_on_the_validation_rows():
    """Training says "three 1s means label 1"; validation says the opposite, so the validation accuracy is 0."""
    ones, twos = [1, 1, 1, 0], [2, 2, 2, 0]
    tokens = torch.tensor([ones, twos] * 10)
    train_labels = torch.tensor([1, 0] * 10)
    val_labels = 1 - train_labels  # the same rows with the opposite labels
    accuracy = baseline.fit_baseline(tokens, train_labels, tokens, val_labels)
    assert accuracy == 0.0, f"expected 0.0 on the contradicting validation rows, got {accuracy}"
    same = baseline.fit_baseline(tokens, train_labels, tokens, train_labels)
    assert same == 1.0, f"validated on the training rows and labels themselves the accuracy is 1.0, got {same}"

"""The order-blind baseline (solutions/baseline.py) against a hand count and the Day 1 lesson."""

from collections import Counter

import numpy as np
import pytest
import torch

from solutions import baseline, data

# Day 1, "A task that needs memory": the bag of counts scores 0.4960 on make_sequences(8000, seed=0) /
# make_sequences(2000, seed=1), below the majority class's 0.5020.
LESSON_BASELINE_ACCURACY = 0.4960
LESSON_MAJORITY_ACCURACY = 0.5020
# 10 of the 2000 validation rows: about as many as the fitted model puts within 1e-4 of probability 0.5,
# where another CPU's rounding may flip a prediction. It stays below the lesson's gap to the majority (0.006).
BASELINE_TOLERANCE = 0.005


def counts_by_hand(tokens: torch.Tensor) -> np.ndarray:
    """Column d - 1 counts digit d, for d in 1..9, with a Counter per row."""
    rows = [Counter(row) for row in tokens.tolist()]
    return np.array([[row[digit] for digit in range(1, 10)] for row in rows], dtype=float)


def test_bag_of_counts_ignores_the_padding_and_counts_digit_9():
    """A hand example: nine columns for digits 1..9, 0 never counted, 9 in the last column."""
    tokens = torch.tensor([[9, 9, 1, 0, 0], [0, 0, 0, 0, 0], [5, 5, 5, 5, 9], [1, 2, 3, 4, 5]])
    counts = baseline.bag_of_counts(tokens)
    expected = np.array(
        [
            [1, 0, 0, 0, 0, 0, 0, 0, 2],
            [0, 0, 0, 0, 0, 0, 0, 0, 0],
            [0, 0, 0, 0, 4, 0, 0, 0, 1],
            [1, 1, 1, 1, 1, 0, 0, 0, 0],
        ],
        dtype=float,
    )
    assert isinstance(counts, np.ndarray)
    assert counts.shape == (4, 9)
    assert np.issubdtype(counts.dtype, np.floating)
    np.testing.assert_array_equal(counts, expected)


@pytest.mark.parametrize("seed", [0, 1])
def test_bag_of_counts_equals_a_hand_count_on_padded_rows(seed):
    """On make_padded_sequences rows it equals a Counter per row, and each row's counts sum to its length."""
    tokens, lengths, _ = data.make_padded_sequences(300, 2, 12, seed=seed)
    counts = baseline.bag_of_counts(tokens)
    np.testing.assert_array_equal(counts, counts_by_hand(tokens))
    np.testing.assert_array_equal(counts.sum(axis=1), lengths.numpy())


def test_bag_of_counts_accepts_a_numpy_array():
    """Tokens given as a numpy array count the same as the tensor."""
    tokens, _ = data.make_sequences(50, seed=2)
    np.testing.assert_array_equal(baseline.bag_of_counts(tokens.numpy()), baseline.bag_of_counts(tokens))


def test_fit_baseline_reproduces_the_day1_accuracy():
    """Day 1: trained on make_sequences(8000, seed=0), scored on make_sequences(2000, seed=1), it gets 0.4960."""
    train_tokens, train_labels = data.make_sequences(8000, seed=0)
    val_tokens, val_labels = data.make_sequences(2000, seed=1)
    accuracy = baseline.fit_baseline(train_tokens, train_labels, val_tokens, val_labels)
    assert isinstance(accuracy, float)
    assert abs(accuracy - LESSON_BASELINE_ACCURACY) <= BASELINE_TOLERANCE
    majority = max(val_labels.float().mean().item(), 1 - val_labels.float().mean().item())
    assert majority == pytest.approx(LESSON_MAJORITY_ACCURACY, abs=1e-6)  # 1004 of 2000 rows: exact
    assert accuracy < majority, "the lesson's point: counts score below always guessing the majority class"


def test_fit_baseline_learns_from_counts_and_scores_on_the_validation_rows():
    """A label counts can see ("is there a 9?") is learnt; flipping only the validation labels flips the score."""
    train_tokens, _ = data.make_sequences(1000, seed=3)
    val_tokens, _ = data.make_sequences(400, seed=4)
    train_labels = (train_tokens == 9).any(dim=1).long()
    val_labels = (val_tokens == 9).any(dim=1).long()
    assert baseline.fit_baseline(train_tokens, train_labels, val_tokens, val_labels) >= 0.99
    assert baseline.fit_baseline(train_tokens, train_labels, val_tokens, 1 - val_labels) <= 0.01

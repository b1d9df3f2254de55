"""The reference data generators (solutions/data.py) against the lessons and their own definitions."""

import pytest
import torch

from solutions import data

# Day 1, "A task that needs memory": make_sequences(8000, seed=0) prints these.
LESSON_CLASS_BALANCE = 0.509
LESSON_FIRST_ROWS = ["95626647", "16633531", "37574514", "74238582"]
LESSON_FIRST_LABELS = [0, 1, 0, 0]  # "repeated later: False, True, False, False"


def lesson_make_sequences(n: int, length: int = 8, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """The Day 1 lesson's generator, copied verbatim (only the names of two locals differ in solutions/)."""
    g = torch.Generator().manual_seed(seed)
    first = torch.randint(1, 10, (n, 1), generator=g)
    rest = torch.randint(1, 9, (n, length - 1), generator=g)
    rest = rest + (rest >= first).long()
    y = torch.randint(0, 2, (n,), generator=g)
    where = torch.randint(0, length - 1, (n, 1), generator=g)
    idx = torch.arange(length - 1).unsqueeze(0)
    plant = (y.unsqueeze(1) == 1) & (idx == where)
    rest = torch.where(plant, first.expand_as(rest), rest)
    return torch.cat([first, rest], dim=1), y


def lesson_make_pattern() -> torch.Tensor:
    """The Day 6 lesson's pattern data, copied verbatim from "Learning a real pattern"."""
    g = torch.Generator().manual_seed(0)
    base = torch.tensor([1, 2, 3, 4, 5])
    seq = base.repeat(400).clone()
    noise = torch.rand(seq.shape, generator=g) < 0.1
    seq[noise] = torch.randint(1, 6, (int(noise.sum()),), generator=g)
    return seq.view(-1, 20)


def labels_by_definition(tokens: torch.Tensor, lengths: torch.Tensor | None = None) -> list[int]:
    """1 when the row's first digit appears again among its later real steps, else 0 (a plain Python loop)."""
    rows = tokens.tolist()
    if lengths is None:
        lengths = torch.full((len(rows),), tokens.shape[1])
    return [int(row[0] in row[1:length]) for row, length in zip(rows, lengths.tolist(), strict=True)]


# --- make_sequences ------------------------------------------------------------------------------


def test_make_sequences_reproduces_the_day1_class_balance_and_first_rows():
    """make_sequences(8000, seed=0): class balance 0.509 and rows 95626647, 16633531, 37574514, 74238582."""
    tokens, labels = data.make_sequences(8000, seed=0)
    assert tokens.shape == (8000, 8) and labels.shape == (8000,)
    assert tokens.dtype == torch.int64 and labels.dtype == torch.int64
    assert f"{labels.float().mean().item():.3f}" == f"{LESSON_CLASS_BALANCE:.3f}"
    assert ["".join(str(d) for d in row) for row in tokens[:4].tolist()] == LESSON_FIRST_ROWS
    assert labels[:4].tolist() == LESSON_FIRST_LABELS


@pytest.mark.parametrize(("n", "length", "seed"), [(8000, 8, 0), (2000, 8, 1), (500, 6, 0), (300, 16, 7)])
def test_make_sequences_equals_the_lessons_generator(n, length, seed):
    """Tokens and labels are exactly those of the lesson's own code, for the lesson's lengths and seeds."""
    tokens, labels = data.make_sequences(n, length=length, seed=seed)
    expected_tokens, expected_labels = lesson_make_sequences(n, length=length, seed=seed)
    assert torch.equal(tokens, expected_tokens)
    assert torch.equal(labels, expected_labels)


@pytest.mark.parametrize(("n", "length", "seed"), [(8000, 8, 0), (2000, 8, 1), (1000, 3, 5), (1000, 16, 2)])
def test_make_sequences_labels_say_whether_the_first_digit_appears_later(n, length, seed):
    """Label 1 exactly when the first digit occurs again later in the row; every token is a digit 1..9."""
    tokens, labels = data.make_sequences(n, length=length, seed=seed)
    assert int(tokens.min()) >= 1 and int(tokens.max()) <= 9
    assert labels.tolist() == labels_by_definition(tokens)


def test_make_sequences_is_deterministic_given_the_seed_and_differs_across_seeds():
    """The same seed gives the same data; another seed gives other data."""
    a_tokens, a_labels = data.make_sequences(200, seed=3)
    b_tokens, b_labels = data.make_sequences(200, seed=3)
    c_tokens, _ = data.make_sequences(200, seed=4)
    assert torch.equal(a_tokens, b_tokens) and torch.equal(a_labels, b_labels)
    assert not torch.equal(a_tokens, c_tokens)


# --- make_padded_sequences -----------------------------------------------------------------------

PADDED_CASES = [(2000, 2, 12, 0), (2000, 3, 8, 1), (500, 5, 5, 2), (500, 2, 2, 3), (1000, 2, 30, 4)]


@pytest.mark.parametrize(("n", "min_length", "max_length", "seed"), PADDED_CASES)
def test_make_padded_sequences_pads_with_zero_exactly_after_each_rows_length(n, min_length, max_length, seed):
    """Within its length a row holds digits 1..9; after it, only the padding token 0."""
    tokens, lengths, labels = data.make_padded_sequences(n, min_length, max_length, seed)
    assert tokens.shape == (n, max_length) and lengths.shape == (n,) and labels.shape == (n,)
    assert tokens.dtype == lengths.dtype == labels.dtype == torch.int64
    real = torch.arange(max_length).unsqueeze(0) < lengths.unsqueeze(1)
    assert bool((tokens[real] >= 1).all()) and bool((tokens[real] <= 9).all())
    assert bool((tokens[~real] == data.PAD).all())
    assert data.PAD == 0


@pytest.mark.parametrize(("n", "min_length", "max_length", "seed"), PADDED_CASES)
def test_make_padded_sequences_draws_lengths_within_min_and_max(n, min_length, max_length, seed):
    """Every length lies in [min_length, max_length], and both ends of the range occur."""
    _, lengths, _ = data.make_padded_sequences(n, min_length, max_length, seed)
    assert int(lengths.min()) == min_length
    assert int(lengths.max()) == max_length


@pytest.mark.parametrize(("n", "min_length", "max_length", "seed"), PADDED_CASES)
def test_make_padded_sequences_labels_are_computed_on_the_real_steps_only(n, min_length, max_length, seed):
    """Label 1 exactly when the first digit reappears among the row's own later real steps."""
    tokens, lengths, labels = data.make_padded_sequences(n, min_length, max_length, seed)
    assert labels.tolist() == labels_by_definition(tokens, lengths)
    assert 0.4 < labels.float().mean().item() < 0.6  # balanced by construction


def test_make_padded_sequences_plants_the_repeat_inside_the_row_even_for_the_shortest_rows():
    """A positive row of length 2 has its first digit repeated at step 1, never in the padding."""
    tokens, lengths, labels = data.make_padded_sequences(2000, 2, 10, seed=0)
    short_positive = (lengths == 2) & (labels == 1)
    assert int(short_positive.sum()) > 0
    assert torch.equal(tokens[short_positive, 1], tokens[short_positive, 0])


def test_make_padded_sequences_is_deterministic_given_the_seed_and_differs_across_seeds():
    """The same seed gives the same tokens, lengths and labels; another seed gives others."""
    first = data.make_padded_sequences(300, 2, 9, seed=11)
    again = data.make_padded_sequences(300, 2, 9, seed=11)
    other = data.make_padded_sequences(300, 2, 9, seed=12)
    assert all(torch.equal(a, b) for a, b in zip(first, again, strict=True))
    assert not torch.equal(first[0], other[0])
    assert not torch.equal(first[1], other[1])


@pytest.mark.parametrize(("min_length", "max_length"), [(1, 5), (0, 5), (6, 5)])
def test_make_padded_sequences_rejects_impossible_lengths(min_length, max_length):
    """A row needs at least two steps (a first digit and a later one), and min_length <= max_length."""
    with pytest.raises(ValueError):
        data.make_padded_sequences(10, min_length, max_length, seed=0)


# --- make_pattern --------------------------------------------------------------------------------


def clean_pattern(rows: int = 100, row_length: int = 20) -> torch.Tensor:
    return torch.tensor([1, 2, 3, 4, 5]).repeat(rows * row_length // 5).view(rows, row_length)


def test_make_pattern_is_the_lessons_100_by_20_data():
    """The default make_pattern() is (100, 20) int64 and equals the Day 6 lesson's data exactly."""
    pattern = data.make_pattern()
    assert pattern.shape == (100, 20)
    assert pattern.dtype == torch.int64
    assert torch.equal(pattern, lesson_make_pattern())


def test_make_pattern_tokens_are_digits_1_to_5_with_about_ten_percent_noise():
    """Tokens are in 1..5; about 10% were redrawn, so about 8% (10% x 4/5) differ from the clean pattern."""
    pattern = data.make_pattern()
    assert int(pattern.min()) >= 1 and int(pattern.max()) <= 5
    differ = (pattern != clean_pattern()).float().mean().item()
    # a redrawn token keeps its clean value 1 time in 5, so the expected share is 0.08 (0.085 with seed 0)
    assert 0.06 <= differ <= 0.11, differ


def test_make_pattern_is_deterministic_and_noise_free_at_zero_noise():
    """The same seed gives the same data, another seed other noise, and noise=0 the clean pattern."""
    assert torch.equal(data.make_pattern(), data.make_pattern())
    assert not torch.equal(data.make_pattern(seed=0), data.make_pattern(seed=1))
    assert torch.equal(data.make_pattern(noise=0.0), clean_pattern())
    assert data.make_pattern(repeats=8, row_length=10).shape == (4, 10)

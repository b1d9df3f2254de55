"""Public tests for TODO 9 (the classifier's forward) and TODO 10 (a training step with clipping).

Run them with `python -m pytest exercises/tests/test_classifier.py`.
"""

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from exercises import classifier

CELLS = ("rnn", "gru", "lstm")
POOLINGS = ("last", "mean", "max")
LENGTHS = (4, 6, 2)  # unsorted, one row full length
MAX_LENGTH = 6


def assert_close(got: torch.Tensor, expected: torch.Tensor) -> None:
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-4)


def small_model(cell: str = "lstm", pooling: str = "last") -> classifier.SequenceClassifier:
    torch.manual_seed(0)
    return classifier.SequenceClassifier(vocab=10, embed=4, hidden=5, cell=cell, pooling=pooling)


def lengths_tensor() -> torch.Tensor:
    """LENGTHS as a new tensor for each call: a forward that changes its lengths in place spoils no other call."""
    return torch.tensor(LENGTHS)


def padded_tokens(padding_token: int = 0) -> torch.Tensor:
    """(3, 6) digits 1..9, with `padding_token` after each row's length."""
    tokens = torch.randint(1, 10, (len(LENGTHS), MAX_LENGTH), generator=torch.Generator().manual_seed(1))
    after_the_end = torch.arange(MAX_LENGTH).unsqueeze(0) >= lengths_tensor().unsqueeze(1)
    return tokens.masked_fill(after_the_end, padding_token)


def batch(n: int = 8) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(2)
    lengths = torch.randint(2, 7, (n,), generator=generator)
    tokens = torch.randint(1, 10, (n, 6), generator=generator)
    tokens = tokens.masked_fill(torch.arange(6).unsqueeze(0) >= lengths.unsqueeze(1), 0)
    labels = torch.randint(0, 2, (n,), generator=generator)
    return tokens, lengths, labels


# ---------------------------------------------------------------- TODO 9 · SequenceClassifier.forward


@pytest.mark.parametrize("pooling", POOLINGS)
@pytest.mark.parametrize("cell", CELLS)
def test_forward_returns_batch_by_two_logits(cell, pooling):
    """forward returns float logits of shape (batch, 2) for every cell and pooling, with and without lengths."""
    model = small_model(cell, pooling)
    tokens = torch.randint(1, 10, (3, MAX_LENGTH))  # batch 3 and length 6 differ, so mixing up the axes shows
    for lengths in (None, lengths_tensor()):
        logits = model(tokens, lengths)
        assert logits.shape == (3, 2), f"expected (batch, 2) = (3, 2), got {tuple(logits.shape)} (lengths={lengths})"
        assert logits.dtype == torch.float32, f"expected float32 logits, got {logits.dtype}"


@pytest.mark.parametrize("pooling", POOLINGS)
def test_on_a_full_length_row_it_pools_as_the_docstring_says(pooling):
    """For one full-length row: 'last' is the final step, 'mean' the mean over steps, 'max' the maximum over steps."""
    model = small_model("gru", pooling)
    tokens = torch.tensor([[3, 1, 4, 1, 5]])
    with torch.no_grad():
        states, _ = model.rnn(model.embedding(tokens))  # (1, 5, hidden)
        pooled = {"last": states[:, -1], "mean": states.mean(dim=1), "max": states.amax(dim=1)}[pooling]
        assert_close(model(tokens), model.head(pooled))


@pytest.mark.parametrize("cell", CELLS)
def test_last_pooling_reads_each_rows_state_at_lengths_minus_1_even_for_a_row_of_length_1(cell):
    """On a padded batch with a row of length 1, 'last' gives the head each row's state at index lengths - 1."""
    model = small_model(cell, "last")
    tokens = torch.tensor([[3, 1, 4, 0], [5, 0, 0, 0], [2, 6, 5, 3]])
    lengths = torch.tensor([3, 1, 4])
    with torch.no_grad():
        states, _ = model.rnn(model.embedding(tokens))  # (3, 4, hidden)
        assert_close(model(tokens, lengths), model.head(states[torch.arange(3), lengths - 1]))


@pytest.mark.parametrize("pooling", POOLINGS)
@pytest.mark.parametrize("cell", CELLS)
def test_the_padding_tokens_do_not_change_the_logits(cell, pooling):
    """On a padded batch, changing the tokens after each row's length leaves every row's logits the same."""
    model = small_model(cell, pooling)
    with torch.no_grad():
        with_zeros = model(padded_tokens(padding_token=0), lengths_tensor())
        with_nines = model(padded_tokens(padding_token=9), lengths_tensor())
    assert_close(with_zeros, with_nines)


@pytest.mark.parametrize("pooling", POOLINGS)
@pytest.mark.parametrize("cell", CELLS)
def test_each_padded_row_gets_the_logits_it_gets_alone(cell, pooling):
    """Row i of a padded batch gets the same logits as the row alone, unpadded, with lengths=None."""
    model = small_model(cell, pooling)
    tokens = padded_tokens()
    with torch.no_grad():
        logits = model(tokens, lengths_tensor())
        for row, length in enumerate(LENGTHS):
            alone = model(tokens[row : row + 1, :length])
            assert_close(logits[row], alone[0])


def test_no_lengths_means_every_row_is_full_length():
    """lengths=None gives the same logits as lengths saying every row is full length."""
    model = small_model("lstm", "mean")
    tokens = torch.randint(1, 10, (3, MAX_LENGTH))
    with torch.no_grad():
        assert_close(model(tokens), model(tokens, torch.full((3,), MAX_LENGTH)))


@pytest.mark.parametrize("pooling", POOLINGS)
def test_forward_leaves_the_callers_tokens_and_lengths_as_they_were(pooling):
    """forward reads the tokens and lengths it is given and leaves them as they were."""
    model, tokens, lengths = small_model("lstm", pooling), padded_tokens(), lengths_tensor()
    given = (tokens.clone(), lengths.clone())
    with torch.no_grad():
        model(tokens, lengths)
    assert torch.equal(tokens, given[0]), f"forward changed the tokens it was given to {tokens.tolist()}"
    assert torch.equal(lengths, given[1]), (
        f"forward changed the lengths it was given from {given[1].tolist()} to {lengths.tolist()}: "
        "compute lengths - 1 as a new tensor (lengths -= 1 writes into the caller's)"
    )


# ---------------------------------------------------------------- TODO 10 · train_step


class CountsScorer(nn.Module):
    """A tiny stand-in for SequenceClassifier, so that these tests need only TODO 10.

    Like the classifier it is called as model(tokens, lengths) and returns logits (batch, 2):
    the mean embedding of each row's real tokens, then a linear layer.
    """

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embedding = nn.Embedding(10, 4)
        self.head = nn.Linear(4, 2)
        with torch.no_grad():  # larger weights, larger gradients: a total norm near 2, so clipping at 1 bites
            self.embedding.weight.mul_(5.0)
            self.head.weight.mul_(5.0)

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        real = (torch.arange(tokens.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(2)
        return self.head((self.embedding(tokens) * real).sum(dim=1) / lengths.unsqueeze(1))


def parameters_of(model: nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.parameters()]


def fresh_gradient_norm(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor, torch.Tensor]) -> float:
    """The total L2 norm of the cross-entropy gradients of a copy of `model` on `batch`, without clipping."""
    tokens, lengths, labels = batch
    twin = copy.deepcopy(model)
    twin.zero_grad()
    F.cross_entropy(twin(tokens, lengths), labels).backward()
    return torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in twin.parameters()])).item()


def math_close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-5 + 1e-3 * abs(b)


@pytest.mark.parametrize("clip", [1.0, 0.05])
def test_train_step_returns_a_float_no_larger_than_clip(clip):
    """train_step returns a Python float: the gradient norm after clipping, so at most clip (+ rounding)."""
    model = CountsScorer()
    assert fresh_gradient_norm(model, batch()) > clip, "set-up: the unclipped gradient norm should exceed clip"
    norm = classifier.train_step(model, batch(), torch.optim.SGD(model.parameters(), lr=0.1), clip=clip)
    assert type(norm) is float, f"return a Python float (float(...)), got {type(norm).__name__}"
    assert 0.0 < norm <= clip + 1e-4, f"with clip={clip} the norm actually used is at most {clip}, got {norm}"


def test_the_default_clip_is_one():
    """Called without clip, train_step clips the gradient norm to 1.0."""
    model = CountsScorer()
    assert fresh_gradient_norm(model, batch()) > 1.0, "set-up: the unclipped gradient norm should exceed 1"
    norm = classifier.train_step(model, batch(), torch.optim.SGD(model.parameters(), lr=0.1))
    assert math_close(norm, 1.0), f"with the default clip=1.0 the norm actually used is 1.0, got {norm}"


def test_train_step_changes_the_parameters():
    """One step with SGD moves the model's parameters."""
    model = CountsScorer()
    before = parameters_of(model)
    classifier.train_step(model, batch(), torch.optim.SGD(model.parameters(), lr=0.1))
    changed = [not torch.equal(old, new) for old, new in zip(before, model.parameters(), strict=True)]
    assert any(changed), "no parameter changed: call optimizer.step()"


def test_without_clipping_it_returns_the_full_gradient_norm():
    """With clip=None it reports the total L2 norm of the plain cross-entropy gradients."""
    model = CountsScorer()
    expected = fresh_gradient_norm(model, batch())
    norm = classifier.train_step(model, batch(), torch.optim.SGD(model.parameters(), lr=0.1), clip=None)
    assert math_close(norm, expected), f"expected the unclipped norm {expected:.5f}, got {norm:.5f}"


def test_it_zeroes_old_gradients_before_the_backward_pass():
    """Gradients left over from earlier do not leak into the step: the reported norm is this batch's alone."""
    model = CountsScorer()
    expected = fresh_gradient_norm(model, batch())
    for p in model.parameters():
        p.grad = torch.full_like(p, 100.0)  # stale gradients from "an earlier step"
    norm = classifier.train_step(model, batch(), torch.optim.SGD(model.parameters(), lr=0.1), clip=None)
    assert math_close(norm, expected), f"expected {expected:.5f}, got {norm:.5f}: zero the gradients first"


def test_the_returned_norm_is_the_size_of_the_step_sgd_took():
    """Plain SGD with lr=1 moves the parameters by exactly the (clipped) gradient: the step's length is the norm."""
    model = CountsScorer()
    before = parameters_of(model)
    norm = classifier.train_step(model, batch(), torch.optim.SGD(model.parameters(), lr=1.0), clip=0.05)
    steps = [(new.detach() - old).norm() for new, old in zip(model.parameters(), before, strict=True)]
    moved = torch.linalg.vector_norm(torch.stack(steps)).item()
    assert moved <= 0.05 + 1e-4, f"the step was {moved:.4f} long: clip the norm before optimizer.step()"
    assert math_close(norm, moved), f"reported norm {norm:.5f}, but the step taken was {moved:.5f}"

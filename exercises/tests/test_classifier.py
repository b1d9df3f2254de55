"""Public tests for classifier.py: SequenceClassifier.forward (the classifier's forward) and train_step (a training
step with clipping).

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
    torch.default_generator.manual_seed(0)
    return classifier.SequenceClassifier(vocab=10, embed=4, hidden=5, cell=cell, pooling=pooling)


def lengths_tensor() -> torch.Tensor:
    """LENGTHS as a new tensor for each call: a forward that changes its lengths in place spoils no other call."""
    return torch.tensor(LENGTHS)


def padded_tokens(width: int = MAX_LENGTH) -> torch.Tensor:
    """(3, width) digits 1..9, with 0 after each row's length (LENGTHS): the padding, as the docstring says."""
    tokens = torch.randint(1, 10, (len(LENGTHS), MAX_LENGTH), generator=torch.Generator().manual_seed(1))
    after_the_end = torch.arange(MAX_LENGTH).unsqueeze(0) >= lengths_tensor().unsqueeze(1)
    more = torch.zeros(len(LENGTHS), width - MAX_LENGTH, dtype=torch.long)  # the same rows, padded further
    return torch.cat([tokens.masked_fill(after_the_end, 0), more], dim=1)


def pooled(states: torch.Tensor, pooling: str) -> torch.Tensor:
    """One row's states (steps, hidden) pooled as the docstring says: (hidden,)."""
    return {"last": states[-1], "mean": states.mean(dim=0), "max": states.amax(dim=0)}[pooling]


def shape_problem(logits: torch.Tensor, expected: tuple[int, ...]) -> str | None:
    """What is wrong with the logits' shape, or None: a word on .squeeze() only when the axes of size 1 are gone."""
    if tuple(logits.shape) == expected:
        return None
    said = f"expected logits of shape {expected}, got {tuple(logits.shape)}"
    if tuple(logits.shape) == tuple(size for size in expected if size != 1):
        said += ": a .squeeze() without a dimension drops every axis of size 1, the batch axis of a batch of one too"
    return said


def batch(n: int = 8) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(2)
    lengths = torch.randint(2, 7, (n,), generator=generator)
    tokens = torch.randint(1, 10, (n, 6), generator=generator)
    tokens = tokens.masked_fill(torch.arange(6).unsqueeze(0) >= lengths.unsqueeze(1), 0)
    labels = torch.randint(0, 2, (n,), generator=generator)
    return tokens, lengths, labels


# ---------------------------------------------------------------- TODO · SequenceClassifier.forward


@pytest.mark.parametrize("pooling", POOLINGS)
@pytest.mark.parametrize("cell", CELLS)
def test_forward_returns_batch_by_two_logits(cell, pooling):
    """forward returns float logits of shape (batch, 2) for every cell and pooling."""
    model = small_model(cell, pooling)
    logits = model(padded_tokens(), lengths_tensor())  # batch 3 and length 6 differ, so mixing up the axes shows
    assert logits.shape == (3, 2), f"expected (batch, 2) = (3, 2), got {tuple(logits.shape)}"
    assert logits.dtype == torch.float32, f"expected float32 logits, got {logits.dtype}"


@pytest.mark.parametrize("pooling", POOLINGS)
def test_on_full_length_rows_it_pools_as_the_docstring_says(pooling):
    """For full-length rows: 'last' is the final step, 'mean' the mean over steps, 'max' the maximum over steps."""
    model = small_model("gru", pooling)
    tokens = torch.tensor([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]])
    with torch.no_grad():
        states, _ = model.rnn(model.embedding(tokens))  # (2, 5, hidden)
        expected = model.head(torch.stack([pooled(row, pooling) for row in states]))
        assert_close(model(tokens, torch.tensor([5, 5])), expected)


@pytest.mark.parametrize("cell", CELLS)
def test_last_pooling_reads_each_rows_state_at_lengths_minus_1(cell):
    """On a padded batch, 'last' gives the head each row's state at index lengths - 1."""
    model = small_model(cell, "last")
    tokens = torch.tensor([[3, 1, 4, 0], [5, 9, 0, 0], [2, 6, 5, 3]])
    lengths = torch.tensor([3, 2, 4])
    with torch.no_grad():
        states, _ = model.rnn(model.embedding(tokens))  # (3, 4, hidden)
        assert_close(model(tokens, lengths), model.head(states[torch.arange(3), lengths - 1]))


@pytest.mark.parametrize("pooling", POOLINGS)
@pytest.mark.parametrize("cell", CELLS)
def test_more_padding_after_the_rows_leaves_the_logits_the_same(cell, pooling):
    """The same rows padded to 9 steps instead of 6 get the same logits: the padding never reaches the pooled state."""
    model = small_model(cell, pooling)
    with torch.no_grad():
        padded_to_6 = model(padded_tokens(), lengths_tensor())
        padded_to_9 = model(padded_tokens(width=9), lengths_tensor())
    assert_close(padded_to_9, padded_to_6)


@pytest.mark.parametrize("pooling", POOLINGS)
@pytest.mark.parametrize("cell", CELLS)
def test_each_padded_row_pools_only_its_own_real_steps(cell, pooling):
    """Row i of a padded batch gets the head of its own real steps' states, pooled (the layer run on the row alone)."""
    model = small_model(cell, pooling)
    tokens = padded_tokens()
    with torch.no_grad():
        logits = model(tokens, lengths_tensor())
        for row, length in enumerate(LENGTHS):
            states, _ = model.rnn(model.embedding(tokens[row : row + 1, :length]))  # (1, length, hidden)
            assert_close(logits[row], model.head(pooled(states[0], pooling)))


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


# Legal inputs, as the docstring allows them: a batch of one row, rows of length 1, lengths left out.


@pytest.mark.parametrize("pooling", POOLINGS)
def test_a_batch_of_one_row_gets_the_logits_the_row_gets_in_a_larger_batch(pooling):
    """Each padded row, alone in a batch of one, gets the logits it gets among the others."""
    model, tokens, lengths = small_model("lstm", pooling), padded_tokens(), lengths_tensor()
    with torch.no_grad():
        together = model(tokens, lengths)
        for row in range(len(LENGTHS)):
            alone = model(tokens[row : row + 1], lengths[row : row + 1])
            problem = shape_problem(alone, (1, 2))
            assert problem is None, f"a batch of one row (lengths {lengths[row : row + 1].tolist()}): {problem}"
            assert_close(alone[0], together[row])


@pytest.mark.parametrize("pooling", POOLINGS)
@pytest.mark.parametrize("cell", CELLS)
def test_a_row_of_length_1_pools_to_its_state_after_its_one_token(cell, pooling):
    """In a padded batch, a row of length 1 gets the head of its state after its first token, for every pooling."""
    model = small_model(cell, pooling)
    tokens = torch.tensor([[3, 1, 4, 0], [5, 0, 0, 0], [2, 6, 5, 3]])
    with torch.no_grad():
        states, _ = model.rnn(model.embedding(tokens))  # (3, 4, hidden)
        assert_close(model(tokens, torch.tensor([3, 1, 4]))[1], model.head(states[1, 0]))


@pytest.mark.parametrize("pooling", POOLINGS)
def test_rows_one_token_long_pool_to_their_only_state(pooling):
    """A batch whose rows are all one token long (tokens of shape (2, 1)) pools each row's only state."""
    model = small_model("gru", pooling)
    tokens = torch.tensor([[7], [2]])
    with torch.no_grad():
        states, _ = model.rnn(model.embedding(tokens))  # (2, 1, hidden)
        assert_close(model(tokens, torch.tensor([1, 1])), model.head(states[:, 0]))


@pytest.mark.parametrize("pooling", POOLINGS)
def test_no_lengths_means_every_row_is_full_length(pooling):
    """lengths=None gives the same logits as lengths saying every row is full length."""
    model = small_model("lstm", pooling)
    tokens = torch.randint(1, 10, (3, MAX_LENGTH))
    with torch.no_grad():
        assert_close(model(tokens), model(tokens, torch.full((3,), MAX_LENGTH)))


# ---------------------------------------------------------------- TODO · train_step


class CountsScorer(nn.Module):
    """A tiny stand-in for SequenceClassifier, so that these tests need only train_step.

    Like the classifier it is called as model(tokens, lengths) and returns logits (batch, 2):
    the mean embedding of each row's real tokens, then a linear layer.
    """

    def __init__(self) -> None:
        super().__init__()
        torch.default_generator.manual_seed(0)
        self.embedding = nn.Embedding(10, 4)
        self.head = nn.Linear(4, 2)
        with torch.no_grad():  # larger weights, larger gradients: a total norm near 2, so clipping at 1 bites
            self.embedding.weight.mul_(5.0)
            self.head.weight.mul_(5.0)

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        real = (torch.arange(tokens.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(2)
        return self.head((self.embedding(tokens) * real).sum(dim=1) / lengths.unsqueeze(1))


BEYOND_REACH = 1e6  # a clip no gradient here reaches: the step is the whole gradient, as with clip=None


def parameters_of(model: nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.parameters()]


def fresh_gradients(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor, torch.Tensor]) -> list[torch.Tensor]:
    """The cross-entropy gradients of a copy of `model` on `batch`, without clipping."""
    tokens, lengths, labels = batch
    twin = copy.deepcopy(model)
    twin.zero_grad()
    F.cross_entropy(twin(tokens, lengths), labels).backward()
    return [p.grad for p in twin.parameters()]


def total_norm(tensors: list[torch.Tensor]) -> float:
    """The L2 norm of all the tensors' entries together."""
    return torch.linalg.vector_norm(torch.stack([tensor.norm() for tensor in tensors])).item()


def fresh_gradient_norm(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor, torch.Tensor]) -> float:
    """The total L2 norm of the cross-entropy gradients of a copy of `model` on `batch`, without clipping."""
    return total_norm(fresh_gradients(model, batch))


def step_taken(before: list[torch.Tensor], model: nn.Module) -> list[torch.Tensor]:
    return [new.detach() - old for new, old in zip(model.parameters(), before, strict=True)]


def along(step: list[torch.Tensor], gradients: list[torch.Tensor]) -> bool:
    """Whether SGD's step points exactly down the gradients (shorter or not): new = old - lr * gradient."""
    flat_step, flat_gradients = torch.cat([s.flatten() for s in step]), torch.cat([g.flatten() for g in gradients])
    return F.cosine_similarity(flat_step, -flat_gradients, dim=0).item() > 1 - 1e-5


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


def test_it_zeroes_old_gradients_before_the_backward_pass():
    """Gradients left over from earlier do not leak into the step: the reported norm is this batch's alone."""
    model = CountsScorer()
    fresh = fresh_gradients(model, batch())
    for p in model.parameters():
        p.grad = torch.full_like(p, 100.0)  # stale gradients from "an earlier step"
    norm = classifier.train_step(model, batch(), torch.optim.SGD(model.parameters(), lr=0.1), clip=BEYOND_REACH)
    expected, added = total_norm(fresh), total_norm([gradient + 100.0 for gradient in fresh])
    hint = ": the old gradients were added to this batch's, zero the gradients first" if math_close(norm, added) else ""
    assert math_close(norm, expected), f"expected {expected:.5f}, got {norm:.5f}{hint}"


def test_the_returned_norm_is_the_size_of_the_step_sgd_took():
    """Plain SGD with lr=1 moves the parameters by exactly the (clipped) gradient: the step's length is the norm."""
    model = CountsScorer()
    whole = fresh_gradient_norm(model, batch())
    before = parameters_of(model)
    norm = classifier.train_step(model, batch(), torch.optim.SGD(model.parameters(), lr=1.0), clip=0.05)
    moved = total_norm(step_taken(before, model))
    whole_step = math_close(moved, whole)
    unclipped = ": it used the whole gradient, clip the norm before optimizer.step()" if whole_step else ""
    assert moved <= 0.05 + 1e-4, f"with clip=0.05 the step is at most 0.05 long; yours was {moved:.4f}{unclipped}"
    assert math_close(norm, moved), f"reported norm {norm:.5f}, but the step taken was {moved:.5f}"


# Legal inputs, as the docstring allows them: clip=None (no clipping), a batch of one row.


def test_with_clip_none_it_takes_and_reports_the_whole_gradient():
    """clip=None skips the clipping: with lr=1 the step is the whole gradient, and so is the norm returned."""
    model = CountsScorer()
    fresh = fresh_gradients(model, batch())
    expected = total_norm(fresh)
    before = parameters_of(model)
    norm = classifier.train_step(model, batch(), torch.optim.SGD(model.parameters(), lr=1.0), clip=None)
    step = step_taken(before, model)
    moved = total_norm(step)
    clipped = moved < expected * (1 - 1e-3) and along(step, fresh)
    hint = f": it was clipped to {moved:.4f}, and with clip=None nothing is clipped" if clipped else ""
    assert math_close(moved, expected), f"with clip=None the step is {expected:.5f} long; yours was {moved:.5f}{hint}"
    assert math_close(norm, expected), f"with clip=None the norm used is the whole {expected:.5f}, got {norm:.5f}"


def test_a_batch_of_one_row_takes_the_step_the_row_twice_over_takes():
    """One row, and the same row twice, have the same mean loss: train_step takes the same step on both."""
    tokens, lengths, labels = batch()
    twice = (tokens[:1].repeat(2, 1), lengths[:1].repeat(2), labels[:1].repeat(2))
    steps = []
    for rows in (twice, (tokens[:1], lengths[:1], labels[:1])):
        model = CountsScorer()
        norm = classifier.train_step(model, rows, torch.optim.SGD(model.parameters(), lr=0.1))
        steps.append((norm, parameters_of(model)))
    (norm_twice, after_twice), (norm_once, after_once) = steps
    said = f"a batch of one row returned the norm {norm_once:.5f}, the row twice over {norm_twice:.5f}"
    assert math_close(norm_once, norm_twice), said
    for once, twice_over in zip(after_once, after_twice, strict=True):
        assert_close(once, twice_over)

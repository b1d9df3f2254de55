"""Public tests for language_model.py: next_token_loss (the shifted next-token loss) and sample (sampling).

Run them with `python -m pytest exercises/tests/test_language_model.py`.

Most tests use tiny hand-made "models" whose scores we know, so the expected
answers can be worked out on paper.
"""

import math

import pytest
import torch
from torch import nn

from exercises import language_model

# ---------------------------------------------------------------- TODO · next_token_loss

# A bigram table: row p is the probability of each next token after token p.
BIGRAM = torch.tensor(
    [
        [0.1, 0.6, 0.3],
        [0.2, 0.2, 0.6],
        [0.7, 0.2, 0.1],
    ]
)


class BigramModel(nn.Module):
    """Scores the next token from the current one only: logits[b, t] = log BIGRAM[tokens[b, t]].

    It answers like NextTokenModel, `(logits (batch, length, vocab), state)`, and remembers its input.
    """

    def __init__(self) -> None:
        super().__init__()
        self.log_table = nn.Parameter(BIGRAM.log())
        self.seen: list[torch.Tensor] = []

    def forward(self, tokens, state=None):
        self.seen.append(tokens.clone())
        return self.log_table[tokens], state


def surprise(previous: int, following: int) -> float:
    """-log P(following | previous): the cross-entropy of one position."""
    return -math.log(BIGRAM[previous, following].item())


def test_the_loss_is_a_scalar_tensor_that_carries_gradients():
    """next_token_loss returns a 0-dimensional float tensor that backpropagates into the model."""
    torch.default_generator.manual_seed(0)
    model = language_model.NextTokenModel(vocab=6, embed=4, hidden=5)
    tokens = torch.randint(1, 6, (3, 7))
    loss = language_model.next_token_loss(model, tokens)
    assert isinstance(loss, torch.Tensor) and loss.dim() == 0, "the loss should be a scalar (0-dimensional) tensor"
    assert loss.dtype == torch.float32, f"expected a float32 loss, got {loss.dtype}"
    loss.backward()
    assert model.head.weight.grad is not None, "no gradient reached the model"


def test_it_feeds_the_model_every_token_but_the_last():
    """The model reads tokens[:, :-1]: it never sees the token it has to predict last."""
    model = BigramModel()
    tokens = torch.tensor([[0, 1, 2, 0], [2, 2, 1, 1]])
    language_model.next_token_loss(model, tokens)
    assert len(model.seen) == 1, f"call the model once on the whole batch, it was called {len(model.seen)} times"
    assert torch.equal(model.seen[0], tokens[:, :-1]), (
        f"the model should read tokens[:, :-1], it read {model.seen[0].tolist()}"
    )


def test_it_scores_each_token_against_the_one_after_it():
    """With a bigram model the loss is the mean of -log P(next | current) over the six pairs, worked out by hand."""
    tokens = torch.tensor([[0, 1, 2, 0], [2, 2, 1, 1]])
    # row 0: 0->1, 1->2, 2->0     row 1: 2->2, 2->1, 1->1
    pairs = [(0, 1), (1, 2), (2, 0), (2, 2), (2, 1), (1, 1)]
    expected = sum(surprise(p, f) for p, f in pairs) / len(pairs)
    loss = language_model.next_token_loss(BigramModel(), tokens)
    assert math.isclose(loss.item(), expected, rel_tol=1e-4), f"expected {expected:.4f}, got {loss.item():.4f}"


def test_it_leaves_out_positions_whose_target_is_padding():
    """With pad_id=0, pairs whose next token is 0 do not count: the mean is over the four real targets."""
    tokens = torch.tensor([[1, 2, 1, 2], [2, 1, 0, 0]])
    # row 0: 1->2, 2->1, 1->2     row 1: 2->1, then 1->0 and 0->0 have padding as the target
    pairs = [(1, 2), (2, 1), (1, 2), (2, 1)]
    expected = sum(surprise(p, f) for p, f in pairs) / len(pairs)
    loss = language_model.next_token_loss(BigramModel(), tokens, pad_id=0)
    assert math.isclose(loss.item(), expected, rel_tol=1e-4), f"expected {expected:.4f}, got {loss.item():.4f}"


def test_it_leaves_the_callers_tokens_as_they_were():
    """next_token_loss reads the tokens it is given and leaves them as they were, padding included."""
    tokens = torch.tensor([[1, 2, 1, 2], [2, 1, 0, 0]])
    given = tokens.clone()
    language_model.next_token_loss(BigramModel(), tokens, pad_id=0)
    assert torch.equal(tokens, given), (
        f"next_token_loss changed the tokens it was given to {tokens.tolist()}: the targets tokens[:, 1:] are a "
        "view of them, so mark padding in a copy (or pass ignore_index=pad_id)"
    )


def test_without_pad_id_every_position_counts():
    """With pad_id=None (the default), every target counts, even the token 0."""
    tokens = torch.tensor([[1, 2, 1, 2], [2, 1, 0, 0]])
    pairs = [(1, 2), (2, 1), (1, 2), (2, 1), (1, 0), (0, 0)]
    expected = sum(surprise(p, f) for p, f in pairs) / len(pairs)
    loss = language_model.next_token_loss(BigramModel(), tokens)
    assert math.isclose(loss.item(), expected, rel_tol=1e-4), f"expected {expected:.4f}, got {loss.item():.4f}"


def test_a_batch_of_one_row_of_two_tokens_has_a_single_target():
    """tokens (1, 2) is legal: the model reads [[2]], the one target is 0, and the loss is -log P(0 | 2)."""
    model = BigramModel()
    loss = language_model.next_token_loss(model, torch.tensor([[2, 0]]))
    assert math.isclose(loss.item(), surprise(2, 0), rel_tol=1e-4), f"expected {surprise(2, 0):.4f}, got {loss.item()}"
    assert [seen.tolist() for seen in model.seen] == [[[2]]], f"the model should read [[2]], it read {model.seen}"


def test_a_padded_batch_of_one_row_leaves_out_its_padding_targets():
    """One row, padded with 0 (pad_id=0): the mean is over its two real targets, 1->2 and 2->2."""
    tokens = torch.tensor([[1, 2, 2, 0, 0]])
    expected = (surprise(1, 2) + surprise(2, 2)) / 2
    loss = language_model.next_token_loss(BigramModel(), tokens, pad_id=0)
    assert math.isclose(loss.item(), expected, rel_tol=1e-4), f"expected {expected:.4f}, got {loss.item():.4f}"


# ---------------------------------------------------------------- TODO · sample


class ScriptedModel(nn.Module):
    """A fake model whose logits are chosen by a rule, for hand-checkable sampling.

    rule(last_token, calls_so_far) -> the scores over `vocab` tokens for the next one. The state it
    returns counts the calls made so far along the chain of states passed back in. It holds
    NextTokenModel's layers, unused, so any way of finding the model's device works on it.
    """

    def __init__(self, vocab: int, rule) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, 2)
        self.rnn = nn.LSTM(2, 2, batch_first=True)
        self.head = nn.Linear(2, vocab)
        self.vocab = vocab
        self.rule = rule
        self.calls: list[dict] = []

    def forward(self, tokens, state=None):
        calls_so_far = 0 if state is None else int(state)
        self.calls.append({"shape": tuple(tokens.shape), "grad": torch.is_grad_enabled()})
        scores = torch.as_tensor(self.rule(int(tokens[0, -1]), calls_so_far + 1), dtype=torch.float32)
        logits = scores.expand(tokens.shape[0], tokens.shape[1], self.vocab).clone()
        return logits, torch.tensor(calls_so_far + 1)


def only(token: int, vocab: int) -> torch.Tensor:
    """Scores that make `token` certain: 0 for it, -inf for every other token."""
    scores = torch.full((vocab,), float("-inf"))
    scores[token] = 0.0
    return scores


def test_sample_returns_start_followed_by_steps_python_ints():
    """sample returns a list of steps + 1 Python ints, starting with `start`, each a token of the vocabulary."""
    torch.default_generator.manual_seed(0)
    model = language_model.NextTokenModel(vocab=6, embed=4, hidden=5)
    generator = torch.Generator().manual_seed(0)
    tokens = language_model.sample(model, start=3, steps=10, temperature=1.0, generator=generator)
    assert isinstance(tokens, list), f"sample should return a list, got {type(tokens).__name__}"
    assert len(tokens) == 11, f"10 steps after the start token make 11 tokens, got {len(tokens)}"
    assert tokens[0] == 3, f"the list starts with the start token 3, got {tokens[0]}"
    assert all(type(token) is int for token in tokens), "use int(...) to turn each sampled tensor into a Python int"
    assert all(0 <= token < 6 for token in tokens), f"every token is in the vocabulary 0..5, got {tokens}"


def test_the_same_seeded_generator_gives_the_same_tokens():
    """Two runs with generators seeded alike produce exactly the same list."""
    torch.default_generator.manual_seed(0)
    model = language_model.NextTokenModel(vocab=6, embed=4, hidden=5)
    first = language_model.sample(model, 1, 15, 1.0, torch.Generator().manual_seed(42))
    torch.default_generator.manual_seed(123)  # the global random state must not matter: only the generator does
    second = language_model.sample(model, 1, 15, 1.0, torch.Generator().manual_seed(42))
    assert first == second, (
        f"two generators seeded alike gave {first} and {second}: draw from the generator you are given, "
        "torch.multinomial(probs, 1, generator=generator), not from the global random state"
    )


def test_it_feeds_back_its_own_last_sample_one_token_at_a_time():
    """A model that always says "the token after yours" gives start, start + 1, ...; each call sees a (1, 1) token."""
    model = ScriptedModel(vocab=6, rule=lambda last, calls: only((last + 1) % 6, 6))
    tokens = language_model.sample(model, 2, 5, 1.0, torch.Generator().manual_seed(0))
    assert tokens == [2, 3, 4, 5, 0, 1], f"expected [2, 3, 4, 5, 0, 1], got {tokens}: feed back each token you draw"
    assert [call["shape"] for call in model.calls] == [(1, 1)] * 5, "feed only the last token, shaped (1, 1)"


def test_it_carries_the_state_from_one_step_to_the_next():
    """A model that says "how many calls this state has seen" gives 1, 2, 3, 4 only if the state is passed back in."""
    model = ScriptedModel(vocab=6, rule=lambda last, calls: only(calls % 6, 6))
    tokens = language_model.sample(model, 0, 4, 1.0, torch.Generator().manual_seed(0))
    assert tokens == [0, 1, 2, 3, 4], "pass the state the model returned back into the next call"


def test_it_samples_rather_than_always_taking_the_top_token():
    """With two nearly equal scores, 40 draws at temperature 1 include both tokens, not just the argmax."""
    model = ScriptedModel(vocab=3, rule=lambda last, calls: torch.tensor([0.2, 0.0, float("-inf")]))
    tokens = language_model.sample(model, 2, 40, 1.0, torch.Generator().manual_seed(0))
    assert set(tokens[1:]) == {0, 1}, "multinomial sampling should pick token 1 sometimes, not only token 0"


def test_a_small_temperature_almost_always_picks_the_top_token():
    """Dividing the scores (0, 1, 0) by 0.01 makes token 1 certain in practice: every draw is 1."""
    model = ScriptedModel(vocab=3, rule=lambda last, calls: torch.tensor([0.0, 1.0, 0.0]))
    tokens = language_model.sample(model, 0, 30, 0.01, torch.Generator().manual_seed(0))
    assert tokens[1:] == [1] * 30, "temperature divides the logits: a small temperature sharpens the distribution"


def test_sample_runs_without_tracking_gradients():
    """Generation needs no gradients: every call to the model happens under torch.no_grad()."""
    model = ScriptedModel(vocab=3, rule=lambda last, calls: torch.zeros(3))
    language_model.sample(model, 0, 3, 1.0, torch.Generator().manual_seed(0))
    assert len(model.calls) == 3, f"3 steps call the model 3 times, it was called {len(model.calls)} times"
    assert not any(call["grad"] for call in model.calls), "wrap the loop in `with torch.no_grad():`"


@pytest.mark.parametrize(("start", "temperature"), [(3, 1.0), (0, 3.0)])
def test_each_step_draws_one_token_with_the_generator_given(start, temperature):
    """With fixed scores, step k's token is the k-th torch.multinomial(probs, 1, generator=generator) draw: any
    other random source (the global state, NumPy, even seeded from the generator) gives other tokens. A temperature
    above 1 is legal (it flattens), and so is the start token 0."""
    scores = torch.tensor([0.3, 1.2, -0.4, 0.8])
    model = ScriptedModel(vocab=4, rule=lambda last, calls: scores)
    tokens = language_model.sample(model, start, 12, temperature, torch.Generator().manual_seed(7))
    draws, probs = torch.Generator().manual_seed(7), torch.softmax(scores / temperature, dim=-1)
    expected = [start] + [int(torch.multinomial(probs, 1, generator=draws)) for _ in range(12)]
    assert tokens == expected, (
        f"expected {expected}, got {tokens}: draw each token with torch.multinomial(probs, 1, generator=generator), "
        "one draw per step, from the probabilities of the logits divided by the temperature"
    )


@pytest.mark.parametrize("steps", [0, 1])
def test_no_step_gives_the_start_alone_and_one_step_one_token_more(steps):
    """steps=0 is legal and returns [start]; steps=1 returns [start, t1]."""
    model = ScriptedModel(vocab=6, rule=lambda last, calls: only((last + 1) % 6, 6))
    tokens = language_model.sample(model, 4, steps, 1.0, torch.Generator().manual_seed(0))
    expected = [4, 5][: steps + 1]
    assert tokens == expected, f"{steps} steps after the start token 4 give {expected}, got {tokens}"

"""Public tests for padding.py: encode_packed (packing), gather_final (gather at the final index) and masked_mean
(masked mean).

Run them with `python -m pytest exercises/tests/test_padding.py`.
"""

import pytest
import torch
from torch import nn

from exercises import padding

CELLS = {"rnn": nn.RNN, "gru": nn.GRU, "lstm": nn.LSTM}
LENGTHS = torch.tensor([3, 5, 1, 4])  # unsorted on purpose, and only row 1 is full length
MAX_LENGTH = 5


def lengths() -> torch.Tensor:
    """LENGTHS as a new tensor for each call: a function that changes its lengths in place spoils no other call."""
    return LENGTHS.clone()


def assert_close(got: torch.Tensor, expected: torch.Tensor) -> None:
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-4)


def padded_batch(features: int = 3, seed: int = 0, padding_value: float = 0.0) -> torch.Tensor:
    """(4, 5, features) random rows, with `padding_value` after each row's length."""
    embedded = torch.randn(len(LENGTHS), MAX_LENGTH, features, generator=torch.Generator().manual_seed(seed))
    after_the_end = torch.arange(MAX_LENGTH).unsqueeze(0) >= LENGTHS.unsqueeze(1)
    return embedded.masked_fill(after_the_end.unsqueeze(2), padding_value)


def layer(cell: str) -> nn.Module:
    torch.default_generator.manual_seed(0)
    return CELLS[cell](3, 4, batch_first=True)


# ---------------------------------------------------------------- TODO · encode_packed


@pytest.mark.parametrize("cell", sorted(CELLS))
def test_encode_packed_returns_output_and_final_state_shapes(cell):
    """encode_packed returns output (batch, max_length, hidden) and h_n (batch, hidden) for RNN, GRU and LSTM."""
    with torch.no_grad():
        output, h_n = padding.encode_packed(layer(cell), padded_batch(), lengths())
    assert output.shape == (4, MAX_LENGTH, 4), (
        f"output should be (batch, max_length, hidden) = (4, 5, 4), got {tuple(output.shape)}"
    )
    assert h_n.shape == (4, 4), f"h_n should be (batch, hidden) = (4, 4), got {tuple(h_n.shape)}"


def test_the_packed_output_keeps_the_padded_length_even_when_every_row_is_shorter():
    """A batch padded to 6 steps whose longest row has 4 still gives output (batch, 6, hidden)."""
    embedded = torch.randn(2, 6, 3)
    with torch.no_grad():
        output, h_n = padding.encode_packed(layer("rnn"), embedded, torch.tensor([2, 4]))
    assert output.shape == (2, 6, 4), (
        f"expected (batch, max_length, hidden) = (2, 6, 4), got {tuple(output.shape)}: "
        "pad_packed_sequence stops at the longest row unless you give it total_length"
    )
    assert h_n.shape == (2, 4), f"h_n should be (batch, hidden) = (2, 4), got {tuple(h_n.shape)}"
    assert torch.all(output[:, 4:] == 0), "the steps after the longest row are padding: zeros"


@pytest.mark.parametrize("cell", sorted(CELLS))
def test_a_batch_padded_past_its_longest_row_keeps_each_rows_own_final_state(cell):
    """Rows of lengths 3 and 1 padded to 6 steps: h_n is each row's state after its own last step, as alone."""
    rnn = layer(cell)
    embedded = torch.randn(2, 6, 3, generator=torch.Generator().manual_seed(3))
    lengths = torch.tensor([3, 1])
    with torch.no_grad():
        output, h_n = padding.encode_packed(rnn, embedded, lengths)
        assert output.shape == (2, 6, 4), f"expected (batch, max_length, hidden) = (2, 6, 4), got {tuple(output.shape)}"
        for row, length in enumerate(lengths.tolist()):
            _, alone_state = rnn(embedded[row : row + 1, :length])
            alone_h = alone_state[0] if isinstance(alone_state, tuple) else alone_state
            assert_close(h_n[row], alone_h[0, 0])


@pytest.mark.parametrize("cell", sorted(CELLS))
def test_the_packed_output_is_zero_after_each_rows_length(cell):
    """The unpacked output holds zeros at every step after a row's own length."""
    with torch.no_grad():
        output, _ = padding.encode_packed(layer(cell), padded_batch(padding_value=7.0), lengths())
    for row, length in enumerate(LENGTHS.tolist()):
        assert torch.all(output[row, length:] == 0), f"row {row} (length {length}) has non-zero output after its end"


@pytest.mark.parametrize("cell", sorted(CELLS))
def test_the_packed_final_state_of_a_short_row_ignores_the_padding(cell):
    """Each row's h_n and output equal running that row alone, unpadded, through the layer (rows stay in order)."""
    rnn = layer(cell)
    embedded = padded_batch()
    with torch.no_grad():
        output, h_n = padding.encode_packed(rnn, embedded, lengths())
        for row, length in enumerate(LENGTHS.tolist()):
            alone_output, alone_state = rnn(embedded[row : row + 1, :length])
            alone_h = alone_state[0] if isinstance(alone_state, tuple) else alone_state  # an LSTM gives (h, c)
            assert_close(h_n[row], alone_h[0, 0])
            assert_close(output[row, :length], alone_output[0])


def test_the_padding_values_do_not_matter_to_encode_packed():
    """Filling the padding with 0 or with 100 gives the same packed output and final state."""
    rnn = layer("gru")
    with torch.no_grad():
        output, h_n = padding.encode_packed(rnn, padded_batch(padding_value=0.0), lengths())
        other_output, other_h_n = padding.encode_packed(rnn, padded_batch(padding_value=100.0), lengths())
    assert_close(output, other_output)
    assert_close(h_n, other_h_n)


@pytest.mark.parametrize("cell", sorted(CELLS))
def test_encode_packed_keeps_the_batch_axis_for_a_batch_of_one_row(cell):
    """A batch of one row gives output (1, max_length, hidden) and h_n (1, hidden), as the row run alone."""
    rnn = layer(cell)
    embedded = torch.randn(1, 4, 3, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        output, h_n = padding.encode_packed(rnn, embedded, torch.tensor([3]))
        assert h_n.shape == (1, 4), (
            f"h_n should be (batch, hidden) = (1, 4), got {tuple(h_n.shape)}: a batch of one row keeps its batch axis"
        )
        assert output.shape == (1, 4, 4), f"output should be (1, 4, 4), got {tuple(output.shape)}"
        alone_output, alone_state = rnn(embedded[:, :3])
        alone_h = alone_state[0] if isinstance(alone_state, tuple) else alone_state
        assert_close(h_n, alone_h[0])
        assert_close(output[:, :3], alone_output)


@pytest.mark.parametrize("cell", sorted(CELLS))
def test_encode_packed_keeps_the_hidden_axis_for_a_hidden_size_of_one(cell):
    """A layer of hidden size 1 gives output (batch, max_length, 1) and h_n (batch, 1)."""
    torch.default_generator.manual_seed(1)
    rnn = CELLS[cell](3, 1, batch_first=True)
    embedded = padded_batch(seed=6)
    with torch.no_grad():
        output, h_n = padding.encode_packed(rnn, embedded, lengths())
        assert h_n.shape == (4, 1), f"h_n should be (batch, hidden) = (4, 1), got {tuple(h_n.shape)}"
        assert output.shape == (4, MAX_LENGTH, 1), f"output should be (4, 5, 1), got {tuple(output.shape)}"
        for row, length in enumerate(LENGTHS.tolist()):
            _, alone_state = rnn(embedded[row : row + 1, :length])
            alone_h = alone_state[0] if isinstance(alone_state, tuple) else alone_state
            assert_close(h_n[row], alone_h[0, 0])


@pytest.mark.parametrize("cell", sorted(CELLS))
def test_encode_packed_runs_a_float64_layer_in_float64(cell):
    """A float64 layer and batch give a float64 output and h_n, each row as run alone."""
    rnn = layer(cell).double()
    embedded = padded_batch(seed=7).double()
    with torch.no_grad():
        output, h_n = padding.encode_packed(rnn, embedded, lengths())
        assert (output.dtype, h_n.dtype) == (torch.float64, torch.float64), (
            f"given float64, return float64: got output {output.dtype}, h_n {h_n.dtype}"
        )
        for row, length in enumerate(LENGTHS.tolist()):
            _, alone_state = rnn(embedded[row : row + 1, :length])
            alone_h = alone_state[0] if isinstance(alone_state, tuple) else alone_state
            assert_close(h_n[row], alone_h[0, 0])


# ---------------------------------------------------------------- TODO · gather_final


def test_gather_final_picks_each_rows_last_real_step_on_an_arange():
    """On arange values, row 0 of length 2 gives step 1 and row 1 of length 4 gives step 3."""
    output = torch.arange(2 * 4 * 3, dtype=torch.float32).view(2, 4, 3)
    # row 0 holds 0..11, three per step: step 1 is (3, 4, 5)
    # row 1 holds 12..23, three per step: step 3 is (21, 22, 23)
    got = padding.gather_final(output, torch.tensor([2, 4]))
    assert_close(got, torch.tensor([[3.0, 4.0, 5.0], [21.0, 22.0, 23.0]]))


def test_gather_final_returns_batch_by_hidden_of_the_same_dtype():
    """gather_final returns (batch, hidden), with the dtype of the output it was given (float32 or float64)."""
    for dtype in (torch.float32, torch.float64):
        got = padding.gather_final(torch.randn(4, MAX_LENGTH, 6, dtype=dtype), lengths())
        assert got.shape == (4, 6), f"expected (batch, hidden) = (4, 6), got {tuple(got.shape)}"
        assert got.dtype == dtype, f"given a {dtype} output, return {dtype}, not {got.dtype}"


def test_gather_final_with_full_lengths_is_the_last_step():
    """When every row is full length, the final states are simply output[:, -1]."""
    output = torch.randn(3, 4, 2)
    assert_close(padding.gather_final(output, torch.tensor([4, 4, 4])), output[:, -1])


def test_gather_final_with_length_one_is_the_first_step():
    """A row of length 1 has its last real step at index 0, not 1."""
    output = torch.randn(2, 3, 2)
    assert_close(padding.gather_final(output, torch.tensor([1, 1])), output[:, 0])


def test_gather_final_keeps_the_batch_axis_for_a_batch_of_one_row():
    """A batch of one row gives (1, hidden), not (hidden,): only the gathered step's axis goes."""
    output = torch.randn(1, 4, 3)
    got = padding.gather_final(output, torch.tensor([2]))
    assert got.shape == (1, 3), f"expected (batch, hidden) = (1, 3), got {tuple(got.shape)}"
    assert_close(got, output[:, 1])


def test_gather_final_keeps_the_hidden_axis_for_a_hidden_size_of_one():
    """A hidden size of 1 gives (batch, 1), not (batch,): only the gathered step's axis goes."""
    output = torch.randn(3, 4, 1)
    got = padding.gather_final(output, torch.tensor([2, 4, 1]))
    assert got.shape == (3, 1), f"expected (batch, hidden) = (3, 1), got {tuple(got.shape)}"
    assert_close(got, torch.stack([output[0, 1], output[1, 3], output[2, 0]]))


def test_gather_final_matches_the_row_by_row_definition():
    """gather_final(output, lengths)[i] equals output[i, lengths[i] - 1] for every row."""
    output = torch.randn(4, MAX_LENGTH, 3)
    got = padding.gather_final(output, lengths())
    for row, length in enumerate(LENGTHS.tolist()):
        assert_close(got[row], output[row, length - 1])


def test_gather_final_leaves_the_callers_output_and_lengths_as_they_were():
    """gather_final reads the output and lengths it is given and leaves them as they were: it returns a new tensor."""
    output, given_lengths = torch.randn(4, MAX_LENGTH, 3), lengths()
    given = (output.clone(), given_lengths.clone())
    padding.gather_final(output, given_lengths)
    assert torch.equal(given_lengths, given[1]), (
        f"gather_final changed the lengths it was given from {given[1].tolist()} to {given_lengths.tolist()}: "
        "compute lengths - 1 as a new tensor (lengths -= 1 writes into the caller's)"
    )
    assert torch.equal(output, given[0]), "gather_final changed the output it was given: read from it, never write"


# ---------------------------------------------------------------- TODO · masked_mean


def test_masked_mean_ignores_garbage_after_the_lengths():
    """Row (1, 3 | 1000) of length 2 has mean 2; row (2, 4, 6) of length 3 has mean 4; the garbage is ignored."""
    output = torch.tensor([[[1.0], [3.0], [1000.0]], [[2.0], [4.0], [6.0]]])  # (batch=2, max_length=3, hidden=1)
    got = padding.masked_mean(output, torch.tensor([2, 3]))
    assert_close(got, torch.tensor([[2.0], [4.0]]))


def test_masked_mean_returns_batch_by_hidden_of_the_same_dtype():
    """masked_mean returns (batch, hidden), with the dtype of the output it was given (float32 or float64)."""
    for dtype in (torch.float32, torch.float64):
        got = padding.masked_mean(torch.randn(4, MAX_LENGTH, 6, dtype=dtype), lengths())
        assert got.shape == (4, 6), f"expected (batch, hidden) = (4, 6), got {tuple(got.shape)}"
        assert got.dtype == dtype, f"given a {dtype} output, return {dtype}, not {got.dtype}"


def test_masked_mean_with_full_lengths_is_the_plain_mean():
    """When every row is full length, the masked mean is the ordinary mean over time."""
    output = torch.randn(3, 4, 2)
    assert_close(padding.masked_mean(output, torch.tensor([4, 4, 4])), output.mean(dim=1))


def test_masked_mean_does_not_change_when_the_padding_changes():
    """Writing different values after each row's length leaves the masked mean unchanged."""
    output = torch.randn(4, MAX_LENGTH, 3)
    after_the_end = (torch.arange(MAX_LENGTH).unsqueeze(0) >= LENGTHS.unsqueeze(1)).unsqueeze(2)
    first = padding.masked_mean(output.masked_fill(after_the_end, 0.0), lengths())
    second = padding.masked_mean(output.masked_fill(after_the_end, -50.0), lengths())
    assert_close(first, second)
    for row, length in enumerate(LENGTHS.tolist()):
        assert_close(first[row], output[row, :length].mean(dim=0))


def test_masked_mean_keeps_the_batch_axis_for_a_batch_of_one_row():
    """A batch of one row gives (1, hidden): the mean of that row's real steps."""
    output = torch.randn(1, 4, 2)
    got = padding.masked_mean(output, torch.tensor([3]))
    assert got.shape == (1, 2), f"expected (batch, hidden) = (1, 2), got {tuple(got.shape)}"
    assert_close(got, output[:, :3].mean(dim=1))


def test_masked_mean_of_a_row_of_length_one_is_its_first_step():
    """A row of length 1 averages one step: its mean is that step."""
    output = torch.randn(3, 4, 2)
    got = padding.masked_mean(output, torch.tensor([1, 4, 1]))
    assert_close(got, torch.stack([output[0, 0], output[1].mean(dim=0), output[2, 0]]))


def test_masked_mean_leaves_the_callers_output_as_it_was():
    """masked_mean returns a new tensor: the output it was given, padding included, is the same after the call."""
    output = torch.randn(4, MAX_LENGTH, 3)
    given = output.clone()
    padding.masked_mean(output, lengths())
    assert torch.equal(output, given), "masked_mean changed the output it was given: use masked_fill, not masked_fill_"

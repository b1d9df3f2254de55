"""Packing, gathering and masked pooling (solutions/padding.py) against running each row alone."""

import pytest
import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence

from solutions import padding

ATOL, RTOL = 1e-5, 1e-4  # "equals" in DESIGN.md section 3
CELLS = {"rnn": nn.RNN, "gru": nn.GRU, "lstm": nn.LSTM}
FEATURES, HIDDEN = 3, 4

# (max_length, lengths): unsorted with a length-1 row; all rows full length; no row reaching max_length; one row
LENGTH_CASES = {
    "unsorted": (7, [3, 7, 1, 5, 7, 2]),
    "full": (5, [5, 5, 5]),
    "all-short": (6, [2, 4, 1]),
    "one-row": (4, [2]),
    "length-1-only": (3, [1, 1]),
}

# Day 4, "Packing is not an optimisation" and the gather / mean demo (rounded to 3 decimals in the lesson).
LESSON_GATHERED = [
    [-0.1190, -0.1840, -0.0420, 0.0230, -0.1500],
    [-0.0970, -0.1540, 0.0100, -0.0110, -0.1510],
    [0.2020, 0.0690, 0.1850, -0.0380, -0.0780],
]
LESSON_MASKED_MEAN = [
    [0.0210, -0.0560, 0.0650, -0.0510, -0.0560],
    [-0.0670, -0.1310, 0.0260, -0.0080, -0.1290],
    [0.1580, 0.0440, 0.1230, 0.0620, -0.0950],
]


def close(actual: torch.Tensor, expected: torch.Tensor) -> bool:
    return actual.shape == expected.shape and torch.allclose(actual, expected, atol=ATOL, rtol=RTOL)


def padded_batch(max_length: int, lengths: list[int], seed: int = 0, garbage: bool = False):
    """A (batch, max_length, FEATURES) batch: random real steps, then zeros (or large garbage) after each length."""
    g = torch.Generator().manual_seed(seed)
    embedded = torch.randn(len(lengths), max_length, FEATURES, generator=g)
    junk = 50.0 * torch.randn(len(lengths), max_length, FEATURES, generator=g) + 7.0
    real = (torch.arange(max_length).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)).unsqueeze(2)
    return torch.where(real, embedded, junk if garbage else torch.zeros(()))


def layer(cell: str, seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return CELLS[cell](FEATURES, HIDDEN, batch_first=True)


def each_row_alone(rnn: nn.Module, embedded: torch.Tensor, lengths: list[int]):
    """Run every row on its own, cut to its length: (outputs, final hidden states) per row."""
    outputs, finals = [], []
    for i, length in enumerate(lengths):
        output, state = rnn(embedded[i : i + 1, :length])
        h = state[0] if isinstance(state, tuple) else state
        outputs.append(output[0])
        finals.append(h[-1, 0])
    return outputs, finals


# --- encode_packed -------------------------------------------------------------------------------


@pytest.mark.parametrize("case", LENGTH_CASES)
@pytest.mark.parametrize("cell", CELLS)
def test_encode_packed_equals_running_each_row_alone(cell, case):
    """Each row's output and h_n equal the same layer run on that row alone, unpadded, in the original order."""
    max_length, lengths = LENGTH_CASES[case]
    rnn = layer(cell)
    embedded = padded_batch(max_length, lengths)
    output, h_n = padding.encode_packed(rnn, embedded, torch.tensor(lengths))
    assert output.shape == (len(lengths), max_length, HIDDEN)
    assert h_n.shape == (len(lengths), HIDDEN)
    outputs, finals = each_row_alone(rnn, embedded, lengths)
    for i, length in enumerate(lengths):
        assert close(output[i, :length], outputs[i]), f"row {i} (length {length}): outputs differ"
        assert close(h_n[i], finals[i]), f"row {i} (length {length}): final state differs"


@pytest.mark.parametrize("case", LENGTH_CASES)
@pytest.mark.parametrize("cell", CELLS)
def test_encode_packed_output_is_zero_after_each_length_and_h_n_is_the_last_real_state(cell, case):
    """output[i, L:] is exactly 0, and h_n[i] is output[i, L - 1] (for an LSTM, h rather than c)."""
    max_length, lengths = LENGTH_CASES[case]
    output, h_n = padding.encode_packed(layer(cell), padded_batch(max_length, lengths), torch.tensor(lengths))
    for i, length in enumerate(lengths):
        assert bool((output[i, length:] == 0).all()), f"row {i}: non-zero output after its length {length}"
        assert close(h_n[i], output[i, length - 1])


@pytest.mark.parametrize("cell", CELLS)
def test_encode_packed_ignores_whatever_fills_the_padding(cell):
    """Large non-zero garbage after each length changes neither output nor h_n, and gets no gradient."""
    max_length, lengths = LENGTH_CASES["unsorted"]
    rnn = layer(cell)
    clean = padded_batch(max_length, lengths)
    dirty = padded_batch(max_length, lengths, garbage=True).requires_grad_(True)
    assert not torch.equal(clean, dirty)
    out_clean, h_clean = padding.encode_packed(rnn, clean, torch.tensor(lengths))
    out_dirty, h_dirty = padding.encode_packed(rnn, dirty, torch.tensor(lengths))
    assert close(out_dirty, out_clean) and close(h_dirty, h_clean)
    (out_dirty.sum() + h_dirty.sum()).backward()
    real = torch.arange(max_length).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    assert bool((dirty.grad[~real] == 0).all())
    assert bool((dirty.grad[real] != 0).any())


def test_encode_packed_differs_from_the_naive_unpacked_run():
    """The check above is not vacuous: running the layer over the padding gives another final state for short rows."""
    max_length, lengths = LENGTH_CASES["unsorted"]
    rnn = layer("lstm")
    embedded = padded_batch(max_length, lengths)
    _, h_packed = padding.encode_packed(rnn, embedded, torch.tensor(lengths))
    _, (h_naive, _) = rnn(embedded)
    short = [i for i, length in enumerate(lengths) if length < max_length]
    full = [i for i, length in enumerate(lengths) if length == max_length]
    assert not torch.allclose(h_packed[short], h_naive[0, short], atol=1e-3)
    assert close(h_packed[full], h_naive[0, full])


def test_encode_packed_reproduces_the_day4_packed_state():
    """Day 4: the packed final state of [6, 7] is [-0.097, -0.154, 0.010, -0.011, -0.151]; likewise the others."""
    seqs = [torch.tensor([1, 2, 3, 4, 5]), torch.tensor([6, 7]), torch.tensor([8, 9, 1])]
    lengths = torch.tensor([len(s) for s in seqs])
    padded = pad_sequence(seqs, batch_first=True)
    torch.manual_seed(0)
    emb = nn.Embedding(10, 4)
    lstm = nn.LSTM(4, 5, batch_first=True)
    with torch.no_grad():
        _, h_n = padding.encode_packed(lstm, emb(padded), lengths)
    # the packed state is what the lesson's gather at lengths - 1 prints too
    assert torch.allclose(h_n, torch.tensor(LESSON_GATHERED), atol=5e-4, rtol=0)


# --- gather_final --------------------------------------------------------------------------------


@pytest.mark.parametrize("case", LENGTH_CASES)
def test_gather_final_equals_a_python_loop_over_the_rows(case):
    """gather_final(output, lengths)[i] is output[i, lengths[i] - 1] for every row."""
    max_length, lengths = LENGTH_CASES[case]
    output = torch.randn(len(lengths), max_length, HIDDEN, generator=torch.Generator().manual_seed(5))
    expected = torch.stack([output[i, length - 1] for i, length in enumerate(lengths)])
    gathered = padding.gather_final(output, torch.tensor(lengths))
    assert gathered.shape == (len(lengths), HIDDEN)
    assert torch.equal(gathered, expected)


def test_gather_final_passes_gradients_to_the_gathered_steps_only():
    """The gradient of the gathered states reaches output[i, lengths[i] - 1] and nothing else."""
    max_length, lengths = LENGTH_CASES["unsorted"]
    output = torch.randn(len(lengths), max_length, HIDDEN, requires_grad=True)
    padding.gather_final(output, torch.tensor(lengths)).sum().backward()
    expected = torch.zeros_like(output)
    for i, length in enumerate(lengths):
        expected[i, length - 1] = 1.0
    assert torch.equal(output.grad, expected)


# --- masked_mean ---------------------------------------------------------------------------------


@pytest.mark.parametrize("case", LENGTH_CASES)
def test_masked_mean_equals_each_rows_mean_over_its_real_steps(case):
    """masked_mean(output, lengths)[i] is output[i, :lengths[i]].mean(0)."""
    max_length, lengths = LENGTH_CASES[case]
    output = torch.randn(len(lengths), max_length, HIDDEN, generator=torch.Generator().manual_seed(6))
    expected = torch.stack([output[i, :length].mean(0) for i, length in enumerate(lengths)])
    assert close(padding.masked_mean(output, torch.tensor(lengths)), expected)


@pytest.mark.parametrize("case", LENGTH_CASES)
def test_masked_mean_is_unaffected_by_large_garbage_in_the_padding(case):
    """Finite but huge values after each length (1e6 and beyond) do not leak into the mean."""
    max_length, lengths = LENGTH_CASES[case]
    g = torch.Generator().manual_seed(7)
    output = torch.randn(len(lengths), max_length, HIDDEN, generator=g)
    real = (torch.arange(max_length).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)).unsqueeze(2)
    garbage = torch.where(real, output, 1e6 * torch.randn(output.shape, generator=g) + 3e7)
    expected = torch.stack([output[i, :length].mean(0) for i, length in enumerate(lengths)])
    assert close(padding.masked_mean(garbage, torch.tensor(lengths)), expected)


def test_gather_final_and_masked_mean_reproduce_the_day4_demo():
    """Day 4: the states gathered at the real final step and the length-divided means the lesson prints."""
    seqs = [torch.tensor([1, 2, 3, 4, 5]), torch.tensor([6, 7]), torch.tensor([8, 9, 1])]
    lengths = torch.tensor([len(s) for s in seqs])
    padded = pad_sequence(seqs, batch_first=True)
    torch.manual_seed(0)
    emb = nn.Embedding(10, 4)
    lstm = nn.LSTM(4, 5, batch_first=True)
    with torch.no_grad():
        out, _ = lstm(emb(padded))
    assert torch.allclose(padding.gather_final(out, lengths), torch.tensor(LESSON_GATHERED), atol=5e-4, rtol=0)
    assert torch.allclose(padding.masked_mean(out, lengths), torch.tensor(LESSON_MASKED_MEAN), atol=5e-4, rtol=0)

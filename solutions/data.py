"""The week's data sets (given code: nothing to do here).

Three generators, each reproducing a lesson exactly:

* `make_sequences`: the Day 1 task "does the first digit appear again?", the
  one a bag of counts cannot solve because the answer depends on order;
* `make_padded_sequences`: the same task with rows of different lengths,
  padded with 0 (the Day 4 problem that packing and gathering solve);
* `make_pattern`: the Day 6 next-token data, a period-5 pattern with 10% noise.
"""

import torch

PAD = 0  # padding token; the digits are 1..9


def make_sequences(n: int, length: int = 8, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Sequences of digits 1..9 labelled 1 when the first digit appears again later.

    Returns `tokens` (n, length) int64 and `labels` (n,) int64. The classes are
    balanced by construction: the rest of the row is drawn from the other eight
    digits, and for label 1 the first digit is planted at one random later position.

    Day 1, "A task that needs memory": `make_sequences(8000, seed=0)` has class
    balance 0.509 and starts with rows 95626647, 16633531, 37574514, 74238582.
    """
    g = torch.Generator().manual_seed(seed)
    first = torch.randint(1, 10, (n, 1), generator=g)
    rest = torch.randint(1, 9, (n, length - 1), generator=g)
    rest = rest + (rest >= first).long()  # 1..9 without the first digit
    labels = torch.randint(0, 2, (n,), generator=g)
    where = torch.randint(0, length - 1, (n, 1), generator=g)
    steps = torch.arange(length - 1).unsqueeze(0)
    plant = (labels.unsqueeze(1) == 1) & (steps == where)
    rest = torch.where(plant, first.expand_as(rest), rest)
    return torch.cat([first, rest], dim=1), labels


def make_padded_sequences(
    n: int, min_length: int, max_length: int, seed: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The same task with a length per row, padded with 0 to `max_length`.

    Returns `tokens` (n, max_length) int64 with `PAD` after each row's length,
    `lengths` (n,) int64 drawn uniformly from [min_length, max_length], and
    `labels` (n,) int64. For label 1 the first digit is planted inside the row's
    real steps, never in its padding, so only the real steps carry the answer.

    Day 4, "Sequences of different lengths": a model that takes the state after
    the padding instead of the state after the data cannot learn this.
    """
    if not 2 <= min_length <= max_length:
        raise ValueError(f"need 2 <= min_length <= max_length, got {min_length} and {max_length}")
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(min_length, max_length + 1, (n,), generator=g)
    first = torch.randint(1, 10, (n, 1), generator=g)
    rest = torch.randint(1, 9, (n, max_length - 1), generator=g)
    rest = rest + (rest >= first).long()
    labels = torch.randint(0, 2, (n,), generator=g)
    # a position among the row's own later steps: 0 .. lengths - 2
    where = (torch.rand(n, 1, generator=g) * (lengths - 1).unsqueeze(1)).long()
    steps = torch.arange(max_length - 1).unsqueeze(0)
    plant = (labels.unsqueeze(1) == 1) & (steps == where)
    rest = torch.where(plant, first.expand_as(rest), rest)
    rest = rest.masked_fill(steps >= (lengths - 1).unsqueeze(1), PAD)
    return torch.cat([first, rest], dim=1), lengths, labels


def make_pattern(repeats: int = 400, row_length: int = 20, noise: float = 0.1, seed: int = 0) -> torch.Tensor:
    """The noisy period-5 pattern 1 2 3 4 5 1 2 3 ... cut into rows.

    Returns (repeats * 5 // row_length, row_length) int64 tokens in 1..5 (vocab 6,
    0 unused). A fraction `noise` of the tokens is replaced by a random digit, so
    no model can predict every token: about 0.90 next-token accuracy is the
    ceiling.

    Day 6, "Learning a real pattern": the default arguments give the lesson's
    (100, 20) data, on which the lesson's LSTM reaches 0.9074 after 60 epochs.
    """
    g = torch.Generator().manual_seed(seed)
    sequence = torch.tensor([1, 2, 3, 4, 5]).repeat(repeats)
    noisy = torch.rand(sequence.shape, generator=g) < noise
    sequence[noisy] = torch.randint(1, 6, (int(noisy.sum()),), generator=g)
    return sequence.view(-1, row_length)

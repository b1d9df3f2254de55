"""The checks of bag_of_counts's item: its batches, and check_bag_of_counts_values.

The reference's counts come through the memo (checks/memo.py): its module imports scikit-learn, which the grader then
imports only on a machine where the answers are not kept yet. `questions` lists what it asks the memo, so that
checks/remember.py can ask them ahead of time.
"""

import numpy as np
import torch

from autograder.checks import memo, variants
from autograder.checks.compare import describe_type, fail, with_diagnosis
from autograder.checks.inputs import generator


def _tokens() -> torch.Tensor:
    tokens = torch.randint(0, 10, (6, 7), generator=generator(0))
    tokens[0] = 9  # a row of nines
    tokens[1, 3:] = 0  # padding
    return tokens


def _without_nine() -> torch.Tensor:
    """A batch whose largest digit is 7: a table sized by the batch gets 7 columns (B2)."""
    tokens = torch.randint(0, 8, (5, 6), generator=generator(1))
    tokens[0, 0] = 7
    return tokens


def _named(got: np.ndarray, tokens: torch.Tensor) -> str | None:
    """The known mistake whose counts these are, exactly."""
    for key, variant in variants.of("bag_of_counts").items():
        counts = variant(tokens)
        if counts.shape == got.shape and np.array_equal(got, counts):
            return key
    return None


def _check_counts(student, tokens: torch.Tensor) -> np.dtype:
    """Fail on counts of the wrong shape or values; the dtype of right counts (integers are judged later)."""
    got = student.run("baseline.bag_of_counts", tokens).value
    expected = memo.reference("baseline.bag_of_counts", tokens)
    if type(got) is not np.ndarray:
        fail(f"bag_of_counts returned {describe_type(got)}; expected a numpy array of shape {expected.shape}.")
    shown = f"tokens {tuple(tokens.shape)} whose largest digit is {int(tokens.max())}"
    if got.shape != expected.shape:
        mistake = _named(got, tokens) or ("B1" if got.shape[1:] in ((8,), (10,)) else None)
        report = f"bag_of_counts returned shape {got.shape}; expected {expected.shape} ({shown})."
        fail(with_diagnosis(_and_integers(mistake, got), report))
    if not np.array_equal(got, expected):
        row = int(np.nonzero((got != expected).any(axis=1))[0][0])
        report = f"bag_of_counts row {row} of {tokens[row].tolist()} is {got[row].tolist()}; "
        report += f"expected {expected[row].tolist()}."
        fail(with_diagnosis(_and_integers(_named(got, tokens), got), report))
    return got.dtype


def _and_integers(mistake: str | None, got: np.ndarray) -> str | None:
    """The mistake seen in the values, and B3 too when the counts are integers: both are named."""
    if got.dtype.kind not in "iu":
        return mistake
    return "B3" if mistake is None else f"{mistake}+B3"


def check_bag_of_counts_values(student) -> None:
    """Column d - 1 counts digit d (1..9) per row; the padding 0 is not counted; nine columns whatever the batch."""
    # right counts as integers are said after every batch, so that a mistake in the values is named with B3
    dtypes = [_check_counts(student, _tokens()), _check_counts(student, _without_nine())]
    wrong = [dtype for dtype in dtypes if dtype.kind != "f"]
    if wrong:
        report = f"bag_of_counts returned {wrong[0]} counts; expected floats (float32 or float64)."
        fail(with_diagnosis("B3" if wrong[0].kind in "iu" else None, report))


def questions() -> list[tuple[str, tuple]]:
    """What these checks ask the reference through the memo: (its function, the arguments), in order."""
    return [("baseline.bag_of_counts", (tokens,)) for tokens in (_tokens(), _without_nine())]

"""Checks for TODO 11 (bag_of_counts) and TODO 12 (fit_baseline)."""

import numpy as np
import torch

from autograder.checks import variants
from autograder.checks.compare import describe_type, fail, with_diagnosis
from autograder.checks.inputs import generator
from autograder.rubric import Rubric, load
from solutions import baseline as reference
from solutions import data


def _tokens() -> torch.Tensor:
    tokens = torch.randint(0, 10, (6, 7), generator=generator(0))
    tokens[0] = 9  # a row of nines
    tokens[1, 3:] = 0  # padding
    return tokens


def check_bag_of_counts_values(student) -> None:
    """Column d - 1 counts digit d (1..9) per row; the padding 0 is not counted."""
    tokens = _tokens()
    got = student.run("baseline.bag_of_counts", tokens).value
    expected = reference.bag_of_counts(tokens)
    if type(got) is not np.ndarray:
        fail(f"bag_of_counts returned {describe_type(got)}; expected a numpy array of shape {expected.shape}.")
    if got.shape in ((6, 8), (6, 10)):
        fail(with_diagnosis("B1", f"bag_of_counts returned shape {got.shape}; expected {expected.shape}."))
    if got.shape != expected.shape or got.dtype.kind != "f":
        fail(f"bag_of_counts returned {got.dtype} of shape {got.shape}; expected float counts of shape (6, 9).")
    if not np.array_equal(got, expected):
        row = int(np.nonzero((got != expected).any(axis=1))[0][0])
        mistake = "B1" if any(np.array_equal(got, v(tokens)) for v in variants.BAG_OF_COUNTS.values()) else None
        shown = f"row {row} of {tokens[row].tolist()} is {got[row].tolist()}"
        report = f"bag_of_counts {shown}; expected {expected[row].tolist()}."
        fail(with_diagnosis(mistake, report))


def check_fit_baseline_accuracy(student, rubric: Rubric | None = None) -> None:
    """The validation accuracy of LogisticRegression(max_iter=1000) on the counts."""
    train, val = data.make_sequences(600, seed=11), data.make_sequences(300, seed=12)
    timeout = (rubric or load()).limits.fit_timeout
    got = student.run("baseline.fit_baseline", *train, *val, timeout=timeout).value
    expected = reference.fit_baseline(*train, *val)
    if type(got) not in (float, int):
        fail(f"fit_baseline returned {describe_type(got)}; expected the accuracy as a Python float.")
    if not 0.0 <= got <= 1.0:  # NaN fails this too
        fail(f"fit_baseline returned {got}; an accuracy lies between 0 and 1.")
    if abs(got - expected) > 0.01:
        context = "600 training rows, 300 validation rows"
        fail(f"fit_baseline returned {got:.4f}; the validation accuracy is {expected:.4f} ({context}).")

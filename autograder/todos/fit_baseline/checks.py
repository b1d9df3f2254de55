"""The checks of fit_baseline's item: its rows, and check_fit_baseline_accuracy.

The reference's accuracy comes through the memo (checks/memo.py): its module imports scikit-learn, which the grader
then imports only on a machine where the answer is not kept yet. `questions` lists what it asks the memo, so that
checks/remember.py can ask it ahead of time.
"""

import torch

from autograder.checks import memo
from autograder.checks.compare import describe_type, fail
from autograder.rubric import Rubric, load
from solutions import data


def check_fit_baseline_accuracy(student, rubric: Rubric | None = None) -> None:
    """The validation accuracy of LogisticRegression(max_iter=1000) on the counts."""
    rows = _baseline_rows()
    timeout = (rubric or load()).limits.fit_timeout
    got = student.run("baseline.fit_baseline", *rows, timeout=timeout).value
    expected = memo.reference("baseline.fit_baseline", *rows)
    if type(got) not in (float, int):
        fail(f"fit_baseline returned {describe_type(got)}; expected the accuracy as a Python float.")
    if not 0.0 <= got <= 1.0:  # NaN fails this too
        fail(f"fit_baseline returned {got}; an accuracy lies between 0 and 1.")
    if abs(got - expected) > 0.01:
        context = "600 training rows, 300 validation rows"
        fail(f"fit_baseline returned {got:.4f}; the validation accuracy is {expected:.4f} ({context}).")


def _baseline_rows() -> tuple[torch.Tensor, ...]:
    """The training and validation tokens and labels fit_baseline is given: 600 rows, then 300."""
    return (*data.make_sequences(600, seed=11), *data.make_sequences(300, seed=12))


def questions() -> list[tuple[str, tuple]]:
    """What this check asks the reference through the memo: (its function, the arguments)."""
    return [("baseline.fit_baseline", _baseline_rows())]

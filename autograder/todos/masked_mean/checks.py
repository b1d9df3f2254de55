"""The checks of masked_mean's items, one check_masked_mean_<aspect> per item of its record.

Its cases are those of every pooling function (checks/pooled.py): unsorted batches, each with a full row, garbage in
the padding. `values` compares with the reference there; `legal_inputs` judges the edges of its legal domain alone,
against the reference (checks/domain.py): there a mask made in NumPy (R8) turns a float32 mean into float64, named
there.
"""

from autograder.checks import pooled, variants

MASKED_MEAN = pooled.Pooling("masked_mean", variants.of("masked_mean"), frozenset({"R8"}))


def check_masked_mean_values(student) -> None:
    """Row i is the mean of output[i, :lengths[i]]; the padding holds garbage."""
    pooled.compare(student, MASKED_MEAN)


def check_masked_mean_legal_inputs(student) -> None:
    """The edges of the legal domain: float32 (the result keeps it: a NumPy mask, R8, makes it float64), a batch
    of one row, rows of length 1, a hidden size of 1, float64."""
    pooled.legal(student, MASKED_MEAN)

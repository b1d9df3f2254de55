"""The checks of gather_final's items, one check_gather_final_<aspect> per item of its record.

Its cases are those of every pooling function (checks/pooled.py): unsorted batches, each with a full row, garbage in
the padding. `values` compares with the reference there; an index one past the last step (lengths, not lengths - 1)
raises on a full row, named G2 by that error alone. `legal_inputs` judges the edges of its legal domain alone, against
the reference (checks/domain.py): there a `.squeeze()` with no dim (G5) loses an axis, named there.
"""

from autograder.checks import pooled, variants
from autograder.student import Raised


def _index_past_the_end(error: Raised) -> str | None:
    """G2 when the error says an index is out of bounds: lengths used as an index, one past a full row's last step."""
    out_of_bounds = error.error_type in ("IndexError", "RuntimeError") and any(
        text in error.error_message for text in ("out of bounds", "out of range")
    )
    return "G2" if out_of_bounds else None


GATHER_FINAL = pooled.Pooling("gather_final", variants.of("gather_final"), frozenset({"G5"}), _index_past_the_end)


def check_gather_final_values(student) -> None:
    """Row i is output[i, lengths[i] - 1], for unsorted lengths and full rows."""
    pooled.compare(student, GATHER_FINAL)


def check_gather_final_legal_inputs(student) -> None:
    """The edges of the legal domain: float32 (the result keeps it), a batch of one row, rows of length 1, a hidden
    size of 1, float64. A `.squeeze()` with no dim (G5) loses an axis there."""
    pooled.legal(student, GATHER_FINAL)

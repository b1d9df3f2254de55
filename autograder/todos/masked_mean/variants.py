"""masked_mean's known-bug versions: one mistaken implementation, and the options that make each mistake.

`TABLE` holds, for each variant key of its mistakes (record.toml: an id, or an id and a form: "G3:plain"), the options
of the mistaken implementation that make it; the checks run these beside the student's code and name the variant whose
outputs match (autograder/checks/variants.py). `COSTS`, `KEPT` and `AT_ONCE` (below) say what each variant costs.
"""

import torch

from autograder.checks.catalogue import VALUES
from autograder.checks.variants import Table


def _mean(output, lengths, *, total="real", divide="lengths", in_place=False, mask="torch"):
    """`mask`: "torch", or "numpy" (R8: built in NumPy as floats, float64, which makes a float32 mean float64)."""
    real = torch.arange(output.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)
    if in_place:  # L3: the padding zeroed in the caller's own output (output.masked_fill_(~mask, 0))
        output.masked_fill_(~real.unsqueeze(2), 0.0)
    weights = real.unsqueeze(2) if mask == "torch" else torch.from_numpy(real.numpy().astype(float)).unsqueeze(2)
    summed = (output * weights).sum(1) if total == "real" else output.sum(1)
    return summed / (lengths.unsqueeze(1).to(output) if divide == "lengths" else output.shape[1])


TABLE = Table(
    _mean,
    {
        "G3": {"divide": "padded"},
        "G3:plain": {"total": "every", "divide": "padded"},
        "G4": {"total": "every"},
        "L3:inputs": {"in_place": True},
        "R8:mask": {"mask": "numpy"},
    },
)


# -- what each variant costs (tests/autograder/checks/test_item_aspects.py holds it to it) --------------
# variant key -> {item aspect: why the variant loses it}; every other item of masked_mean passes
COSTS: dict[str, dict[str, str]] = {
    "G3": {"values": VALUES},
    "G3:plain": {"values": VALUES},
    "G4": {"values": VALUES},
    "L3:inputs": {"values": "it zeroes the padding in the caller's own output"},
    "R8:mask": {"legal_inputs": "its NumPy mask is float64: a float32 mean comes back float64"},
}

# mistakes in the values, and the aspect items of masked_mean they keep
KEPT: dict[str, tuple[str, ...]] = {
    "G3": ("legal_inputs",),
    "R8:mask": ("values",),  # its values are right, in float64
}

# mistakes made at once: each is named, however many (not only pairs)
AT_ONCE = (
    "G3+L3:inputs",  # a wrong mean and the caller's output changed: both named, on one item
    "G3+R8:mask",  # the values name G3, the float32 legal input R8 (with G3, which gives them)
)

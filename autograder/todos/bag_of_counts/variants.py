"""bag_of_counts's known-bug versions: one mistaken implementation, and the options that make each mistake.

`TABLE` holds, for each variant key of its mistakes (record.toml: an id, or an id and a form: "B1:ten"), the options
of the mistaken implementation that make it; the checks run these beside the student's code and name the variant whose
outputs match (autograder/checks/variants.py). `COSTS`, `KEPT` and `AT_ONCE` (below) say what each variant costs.
"""

import numpy as np
import torch

from autograder.checks.catalogue import VALUES
from autograder.checks.variants import Table


def _bag(tokens, *, digits="1-9", fill_nine=False, counts_as="float"):
    """`digits`: the columns counted ("1-9"; "0-8", "0-9", "1-8"; "1-max", up to the batch's largest token);
    `counts_as`: "float", or "integer" (B3: the sum's int64 left as is)."""
    tokens = torch.as_tensor(tokens)
    low, high = {"1-9": (1, 9), "0-8": (0, 8), "0-9": (0, 9), "1-8": (1, 8), "1-max": (1, int(tokens.max()))}[digits]
    counts = (tokens.unsqueeze(-1) == torch.arange(low, high + 1)).sum(1)
    counts = (counts.float() if counts_as == "float" else counts).numpy()
    return np.concatenate([counts, np.zeros((len(counts), 1), dtype=counts.dtype)], axis=1) if fill_nine else counts


TABLE = Table(
    _bag,
    {
        "B1": {"digits": "0-8"},
        "B1:ten": {"digits": "0-9"},  # a column for the padding too
        "B1:eight": {"digits": "1-8"},
        "B1:nine_zero": {"digits": "1-8", "fill_nine": True},
        "B2": {"digits": "1-max"},
        "B3": {"counts_as": "integer"},
    },
)


# -- what each variant costs (tests/autograder/checks/test_item_aspects.py holds it to it) --------------
# variant key -> {item aspect: why the variant loses it}; every other item of bag_of_counts passes
COSTS: dict[str, dict[str, str]] = {
    "B1": {"values": VALUES},
    "B1:ten": {"values": VALUES},
    "B1:eight": {"values": VALUES},
    "B1:nine_zero": {"values": VALUES},
    "B2": {"values": "a batch without a 9 gets fewer columns"},
    "B3": {"values": "its counts are integers where the features are floats"},
}

# mistakes made at once: each is named, however many (not only pairs)
AT_ONCE = (
    "B1+B3",
    "B2+B3",
)

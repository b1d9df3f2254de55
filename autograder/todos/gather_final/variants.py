"""gather_final's known-bug versions: one mistaken implementation, and the options that make each mistake.

`TABLE` holds, for each variant key of its mistakes (record.toml: an id, or an id and a form: "G2:clamped"; also
L3, lstm_step's, in its form for a function's inputs), the options of the mistaken implementation that make it; the
checks run these beside the student's code and name the variant whose outputs match (autograder/checks/variants.py).
`COSTS`, `KEPT` and `AT_ONCE` (below) say what each variant costs.
"""

import torch

from autograder.checks.catalogue import VALUES
from autograder.checks.variants import Table


def _gather(output, lengths, *, index="lengths - 1", squeeze="step", in_place=False):
    rows = torch.arange(len(lengths))
    if in_place:  # L3: the caller's lengths made the last steps' indices in place (lengths -= 1)
        lengths -= 1
        last = lengths
    else:
        last = lengths - 1
    if index == "last":
        picked = output[:, -1]
    elif index == "lengths":
        picked = output[rows, last + 1]
    elif index == "clamped":
        picked = output[rows, (last + 1).clamp(max=output.shape[1] - 1)]
    else:
        picked = output[rows, last]
    return picked.unsqueeze(1).squeeze() if squeeze == "every" else picked  # "every": .squeeze() with no dim


TABLE = Table(
    _gather,
    {
        "G1": {"index": "last"},
        "G2": {"index": "lengths"},
        "G2:clamped": {"index": "clamped"},
        "G5": {"squeeze": "every"},
        "L3:inputs": {"in_place": True},
    },
)


# -- what each variant costs (tests/autograder/checks/test_item_aspects.py holds it to it) --------------
# variant key -> {item aspect: why the variant loses it}; every other item of gather_final passes
COSTS: dict[str, dict[str, str]] = {
    "G1": {"values": VALUES},
    "G2": {"values": VALUES},
    "G2:clamped": {"values": VALUES},
    "G5": {"legal_inputs": "a batch of one row or a hidden size of 1 loses an axis"},
    "L3:inputs": {"values": "it makes the caller's lengths the last steps' indices in place (lengths -= 1)"},
}

# mistakes in the values, and the aspect items of gather_final they keep
KEPT: dict[str, tuple[str, ...]] = {
    "G1": ("legal_inputs",),
    "G5": ("values",),
}

# mistakes made at once: each is named, however many (not only pairs)
AT_ONCE = ("G1+L3:inputs",)  # the state after the padding and the caller's lengths changed: both named, on one item

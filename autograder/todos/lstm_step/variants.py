"""lstm_step's known-bug versions: one mistaken implementation, and the options that make each mistake.

`TABLE` holds, for each variant key of its mistakes (record.toml: an id, or an id and a form: "L1:tensorflow"), the
options of the mistaken implementation that make it; the checks run these beside the student's code and name the
variant whose outputs match (autograder/checks/variants.py). `COSTS`, `KEPT` and `AT_ONCE` (below) say what each
variant costs.
"""

import torch

from autograder.checks.catalogue import VALUES
from autograder.checks.variants import Table


def _lstm(x, state, w_ih, w_hh, b_ih, b_hh, *, order="ifgo", cell="add", in_place=False, unpack="hc"):
    h, c = state if unpack == "hc" else reversed(state)  # "ch" (L4): c, h = state, for PyTorch's (h, c)
    blocks = dict(zip(order, (x @ w_ih.T + b_ih + h @ w_hh.T + b_hh).chunk(4, dim=1), strict=True))
    i, f, g, o = torch.sigmoid(blocks["i"]), torch.sigmoid(blocks["f"]), torch.tanh(blocks["g"]), blocks["o"]
    c_new = {"add": f * c + i * g, "multiply": f * c * i * g, "no_old": i * g}[cell]
    if in_place:  # L3: the new cell written into the caller's (c.mul_(f).add_(i * g))
        c_new = c.copy_(c_new)
    return torch.sigmoid(o) * torch.tanh(c_new), c_new


TABLE = Table(
    _lstm,
    {
        "L1": {"order": "ifog"},
        "L1:tensorflow": {"order": "igfo"},
        "L2": {"cell": "multiply"},
        "L2:no_old": {"cell": "no_old"},
        "L3": {"in_place": True},
        "L4": {"unpack": "ch"},
    },
)


# -- what each variant costs (tests/autograder/checks/test_item_aspects.py holds it to it) --------------
# variant key -> {item aspect: why the variant loses it}; every other item of lstm_step passes
COSTS: dict[str, dict[str, str]] = {
    "L1": {"values": VALUES},
    "L1:tensorflow": {"values": VALUES},
    "L3": {
        "values": "it writes the new cell into the caller's c",
        "gradients": "writing into c changes what autograd saved of it: backward raises",
    },
    "L2": {"values": VALUES},
    "L2:no_old": {"values": VALUES},
    "L4": {"values": VALUES},
}

# mistakes in the values, and the aspect items of lstm_step they keep
KEPT: dict[str, tuple[str, ...]] = {
    "L2": ("writes_the_step", "gradients", "legal_inputs"),
    "L4": ("writes_the_step", "gradients", "legal_inputs"),
}

# mistakes made at once: each is named, however many (not only pairs)
AT_ONCE = ("L1+L4",)

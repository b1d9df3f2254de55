"""set_forget_bias's known-bug versions: one mistaken implementation, and the options that make each mistake.

`TABLE` holds, for each variant key of its mistakes (record.toml: an id, or an id and a form: "F1:last"), the options
of the mistaken implementation that make it; the checks run these beside the student's code and name the variant whose
outputs match (autograder/checks/variants.py). `COSTS`, `KEPT` and `AT_ONCE` (below) say what each variant costs. Its
effect is on the module it is given (`in_place`): the release records that module.
"""

import torch
from torch import nn

from autograder.checks.catalogue import VALUES
from autograder.checks.variants import Table


def _layer(name: str) -> int:
    return int(name.split("_l")[1].split("_")[0]) if "_l" in name else 0


def _forget(
    lstm: nn.LSTM,
    value: float = 1.0,
    *,
    block: int = 1,
    ih="value",  # what bias_ih's block gets: "value", or "keep" (left at its random values)
    hh="zero",  # what bias_hh's block gets: "zero", "value" or "keep"
    others="keep",  # the other three blocks of both biases: "keep", or "zero"
    layers=None,
    reverse=True,
    replace=False,  # new Parameter objects in place of the old
) -> nn.LSTM:
    hidden = lstm.hidden_size
    part = slice(block * hidden, (block + 1) * hidden)
    written = {"value": value, "zero": 0.0, "keep": None}
    with torch.no_grad():
        for name, parameter in lstm.named_parameters():
            skipped = (layers is not None and _layer(name) not in layers) or (not reverse and name.endswith("_reverse"))
            if skipped or not name.startswith("bias"):
                continue
            if others == "zero":
                kept = parameter[part].clone()
                parameter.zero_()
                parameter[part] = kept
            new = written[ih if name.startswith("bias_ih") else hh]
            if new is not None:
                parameter[part] = new
    if replace:
        for name, parameter in list(lstm.named_parameters()):
            if name.startswith("bias"):
                setattr(lstm, name, nn.Parameter(parameter.detach().clone()))
    return lstm


TABLE = Table(
    _forget,
    {
        "F1": {"block": 0},
        "F1:last": {"block": 3},
        "F1:cell": {"block": 2},
        "F2": {"hh": "value"},
        "F3": {"layers": {0}},
        "F3:forward": {"reverse": False},
        "F3:first": {"layers": {0}, "reverse": False},
        "F4": {"replace": True},
        "F5": {"hh": "keep"},
        "F5:hh": {"ih": "keep", "hh": "value"},
        "F5:zeroed": {"others": "zero"},
    },
    in_place=True,  # its effect is on the module it is given
)


# -- what each variant costs (tests/autograder/checks/test_item_aspects.py holds it to it) --------------
# variant key -> {item aspect: why the variant loses it}; every other item of set_forget_bias passes
COSTS: dict[str, dict[str, str]] = {
    "F1": {"forget_block": VALUES},
    "F1:last": {"forget_block": VALUES},
    "F1:cell": {"forget_block": VALUES},
    "F2": {"forget_block": VALUES},
    "F3": {"all_layers_and_directions": "the layers after the first are left as they were"},
    "F3:forward": {"all_layers_and_directions": "the reverse directions are left as they were"},
    "F3:first": {"all_layers_and_directions": "only layer 0 forward is set"},
    "F4": {"in_place": "the LSTM holds new bias Parameters"},
    "F5": {"forget_block": VALUES},
    "F5:hh": {"forget_block": VALUES},
    "F5:zeroed": {"forget_block": VALUES},
}

# mistakes in the values, and the aspect items of set_forget_bias they keep
KEPT: dict[str, tuple[str, ...]] = {
    "F2": ("all_layers_and_directions", "in_place", "legal_inputs"),
}

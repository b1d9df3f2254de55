"""encode_packed's known-bug versions: one mistaken implementation, and the options that make each mistake.

`TABLE` holds, for each variant key of its mistakes (record.toml: an id, or an id and a form: "P1:masked"), the
options of the mistaken implementation that make it; the checks run these beside the student's code and name the
variant whose outputs match (autograder/checks/variants.py). `COSTS`, `KEPT` and `AT_ONCE` (below) say what each
variant costs.
"""

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from autograder.checks.catalogue import VALUES
from autograder.checks.variants import Table


def _encode(
    rnn: nn.Module,
    embedded,
    lengths,
    *,
    pack=True,  # False: the layer runs over the padded rectangle
    masked=False,  # unpacked, then the padding steps zeroed: the output looks packed, the final state is not
    restore=True,  # False: sorted by length and never put back
    enforced=False,  # True: pack_padded_sequence's default enforce_sorted=True left on unsorted lengths (it raises)
    pack_batch_first=True,
    unpack_batch_first=True,
    total_length=True,
    final="state",  # h_n from the layer's "state", or the unpacked output's "last_step" or "last_row"
    squeeze=False,  # G5: h_n.squeeze() with no dim for h_n[-1]: a batch of one row (or hidden size 1) loses an axis
):
    if not pack:
        output, state = rnn(embedded)
        if masked:
            output = output * (torch.arange(embedded.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(2)
    else:
        order = lengths.argsort(descending=True) if not restore else None
        rows, sizes = (embedded, lengths) if order is None else (embedded[order], lengths[order])
        enforce = order is not None or enforced
        packed = pack_padded_sequence(rows, sizes, batch_first=pack_batch_first, enforce_sorted=enforce)
        output, state = rnn(packed)
        padded_to = {"total_length": embedded.shape[1]} if total_length else {}
        output, _ = pad_packed_sequence(output, batch_first=unpack_batch_first, **padded_to)
    if final == "last_step":
        return output, output[:, -1]
    if final == "last_row":
        return output, output[-1]
    h_n = state[0] if isinstance(state, tuple) else state
    return output, h_n.squeeze() if squeeze else h_n[-1]


TABLE = Table(
    _encode,
    {
        "P1": {"pack": False},
        "P1:masked": {"pack": False, "masked": True},
        "P2": {"restore": False},
        "P2:enforce_sorted": {"enforced": True},
        "P3": {"pack_batch_first": False},
        "P3:unpacked": {"unpack_batch_first": False},
        "P4": {"final": "last_step"},
        "P4:row": {"final": "last_row"},
        "P5": {"total_length": False},
        "G5:h_n": {"squeeze": True},
    },
)


# -- what each variant costs (tests/autograder/checks/test_item_aspects.py holds it to it) --------------
RAISES = "packing time-major fails on these batches (the lengths do not match the batch)"
SORTED = "pack_padded_sequence raises on lengths that are not sorted (enforce_sorted=True left on)"

# variant key -> {item aspect: why the variant loses it}; every other item of encode_packed passes
COSTS: dict[str, dict[str, str]] = {
    "P1": {
        "final_state": VALUES,
        "output": VALUES,
        "skips_padding": "the layer runs over the padding, so the padding changes its results",
    },
    "P1:masked": {
        "final_state": VALUES,
        "skips_padding": "the layer runs over the padding, so the padding changes its final state",
    },
    "P2": {"final_state": "the rows come back sorted", "output": "the rows come back sorted"},
    "P2:enforce_sorted": {"final_state": SORTED, "output": SORTED},  # the padding: judged sorted
    "P3": {"final_state": RAISES, "output": RAISES, "skips_padding": RAISES},
    "P3:unpacked": {"output": "the output comes back (length, batch, hidden)"},
    "P4": {"final_state": "h_n is the output's last step, padding for every short row"},
    "P4:row": {"final_state": "h_n is the output's last row, not a state per row"},
    "P5": {"output": "the output stops at the longest row"},
    "G5:h_n": {"legal_inputs": "h_n.squeeze(): a batch of one row (or hidden size 1) loses an axis"},
}

# mistakes in the values, and the aspect items of encode_packed they keep
KEPT: dict[str, tuple[str, ...]] = {
    "P4": ("output", "skips_padding", "legal_inputs"),
    "P2:enforce_sorted": ("skips_padding", "legal_inputs"),  # judged on its rows sorted
    "G5:h_n": ("final_state", "output", "skips_padding"),  # batches of two rows or more
}

# mistakes made at once: each is named, however many (not only pairs)
AT_ONCE = (
    "P2:enforce_sorted+P4",  # the packing raises on unsorted lengths; run sorted, h_n shows P4
    "P3:unpacked+P5",  # unpacked time-major to the longest row: both named from the shapes
)

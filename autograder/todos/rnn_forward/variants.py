"""rnn_forward's known-bug versions: one mistaken implementation, and the options that make each mistake.

`TABLE` holds, for each variant key of its mistakes (record.toml: an id, or an id and a form: "R1:ih"), the options of
the mistaken implementation that make it; the checks run these beside the student's code and name the variant whose
outputs match (autograder/checks/variants.py). `COSTS`, `KEPT` and `AT_ONCE` (below) say what each variant costs.
"""

import numpy as np
import torch

from autograder.checks.catalogue import VALUES
from autograder.checks.variants import Table


def _numpy_zeros(*size: int) -> torch.Tensor:
    return torch.from_numpy(np.zeros(size))  # NumPy's default dtype: float64, whatever the input's


def _rnn(
    x,
    w_ih,
    w_hh,
    b_ih,
    b_hh,
    h0=None,
    *,
    transpose="both",  # the matrices transposed right: "both", "ih", "hh" or "neither"
    carry=True,
    use_ih=True,
    use_hh=True,
    walk="time",  # "time", "time_major" (x read as (length, batch, input)), "rows" (x[t] for t over axis 0) or
    # "steps" (x[:, t] for t over as many steps as the batch has rows: the length read from axis 0, x.size(0))
    start="h0",  # "h0", or "zeros" whatever h0 is
    final="last",  # h_n after the "last" step or the "first"
    stack=1,  # the axis the steps are stacked on: 1 (batch_first), or 0 (R7: (length, batch, hidden))
    buffers="input",  # the zero state made from the "input" (x.new_zeros), or R8's "float32" (torch.zeros) or
    # "numpy" (torch.from_numpy(np.zeros(...)): float64 whatever the input)
    in_place=False,  # L3: the state written into the caller's h0 at every step (h = h0[0]; h.copy_(...))
):
    x = x.transpose(0, 1) if walk == "time_major" else x
    batch, length = x.shape[0], x.shape[0 if walk in ("rows", "steps") else 1]
    zeros = {"input": x.new_zeros, "float32": torch.zeros, "numpy": _numpy_zeros}[buffers]
    origin = zeros(batch, w_hh.shape[0]) if h0 is None or start == "zeros" else h0[0]
    a = w_ih if transpose in ("neither", "hh") else w_ih.T
    b = w_hh if transpose in ("neither", "ih") else w_hh.T
    h, states = origin, []
    for t in range(length):
        step = x[t] if walk == "rows" else x[:, t]
        previous = h if carry else origin
        new = torch.tanh(step @ a + (b_ih if use_ih else 0) + previous @ b + (b_hh if use_hh else 0))
        h = h.copy_(new) if in_place and h0 is not None else new
        states.append(h.clone() if in_place else h)
    output = torch.stack(states, dim=stack)
    return output, (h if final == "last" else states[0]).unsqueeze(0)


TABLE = Table(  # R1's forms: "ih" raises a shape error first whenever "both" does, so it is tried first
    _rnn,
    {
        "R1:ih": {"transpose": "hh"},
        "R1:hh": {"transpose": "ih"},
        "R1": {"transpose": "neither"},
        "R2": {"carry": False},
        "R3": {"use_hh": False},
        "R3:ih": {"use_ih": False},
        "R4": {"walk": "time_major"},
        "R4:rows": {"walk": "rows"},
        "R4:steps": {"walk": "steps"},
        "R5": {"final": "first"},
        "R6": {"start": "zeros"},
        "R7": {"stack": 0},
        "R8": {"buffers": "float32"},
        "R8:numpy": {"buffers": "numpy"},
        "L3:inputs": {"in_place": True},
    },
)


# -- what each variant costs (tests/autograder/checks/test_item_aspects.py holds it to it) --------------
AXIS = "the loop walks the batch: on a batch whose size is not its length it fails, or gives (length, batch, hidden)"
STEPS = "the length is read from the batch axis: on a batch whose size is not its length the output is misshapen"
NUMPY_ZEROS = "its NumPy zero state is float64: a float32 input without h0 breaks it"

# variant key -> {item aspect: why the variant loses it}; every other item of rnn_forward passes
COSTS: dict[str, dict[str, str]] = {
    "R1:ih": {"output": VALUES, "final_state": VALUES},
    "R1:hh": {"output": VALUES, "final_state": VALUES},
    "R1": {"output": VALUES, "final_state": VALUES},
    "R2": {
        "output": VALUES,
        "final_state": VALUES,
        "initial_state": "each step restarts from h0, so a run continued from its own state does not continue it",
    },
    "R3": {"output": VALUES, "final_state": VALUES},
    "R3:ih": {"output": VALUES, "final_state": VALUES},
    "R4": {"output": AXIS, "final_state": AXIS, "initial_state": AXIS, "gradients": AXIS},
    "R4:rows": {"output": AXIS, "final_state": AXIS, "initial_state": AXIS, "gradients": AXIS},
    "R4:steps": {"output": STEPS, "final_state": STEPS, "initial_state": STEPS, "gradients": STEPS},
    "R5": {"final_state": "h_n is the state after the first step"},
    "R6": {"initial_state": "h0 is ignored: the output is the same with it as without"},
    "R8": {"legal_inputs": "its zero state is float32: a float64 input without h0 breaks it"},
    "R8:numpy": {
        "output": NUMPY_ZEROS,
        "final_state": NUMPY_ZEROS,
        "initial_state": NUMPY_ZEROS,
        "writes_the_loop": NUMPY_ZEROS,
        "legal_inputs": "the ordinary float32 input the legal ones are judged against breaks it",
    },
    "R7": {"output": "the loop is right, but its output is stacked (length, batch, hidden)"},
    "L3:inputs": {
        "initial_state": "it writes each step's state into the caller's h0",
        "gradients": "writing into h0 changes the caller's tensor (and breaks its backward)",
    },
}

# mistakes in the values, and the aspect items of rnn_forward they keep
KEPT: dict[str, tuple[str, ...]] = {
    "R1:hh": ("writes_the_loop", "initial_state", "gradients", "legal_inputs"),
    "R4": ("writes_the_loop", "legal_inputs"),  # judged on a batch as long as its rows
    "R7": ("final_state", "initial_state", "gradients", "writes_the_loop", "legal_inputs"),
    "R8": ("output", "final_state", "initial_state", "gradients", "writes_the_loop"),  # float32
}

# mistakes made at once: each is named, however many (not only pairs)
AT_ONCE = (
    "R1:hh+R5+R6",
    "R1+R6",  # R1 raises on most inputs; h0 is judged on square ones, where R6 shows
    "R1+R5",  # R1's shape error and the first state, named from the square input beside it
    "R1+R8",  # R1's shape error on ordinary inputs; the float64 legal input names R8
    "R4:steps+R8",
)

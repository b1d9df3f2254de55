"""sample's known-bug versions: one mistaken implementation, and the options that make each mistake.

`TABLE` holds, for each variant key of its mistakes (record.toml: an id, or an id and a form: "T4:numpy"), the options
of the mistaken implementation that make it; the checks run these beside the student's code and name the variant whose
outputs match (autograder/checks/variants.py). `COSTS`, `KEPT` and `AT_ONCE` (below) say what each variant costs.
"""

import contextlib

import numpy as np
import torch

from autograder.checks.catalogue import VALUES
from autograder.checks.variants import Table


def _sample(model, start, steps, temperature, generator, *, scale="divide", carry=True, draw="generator", no_grad=True):
    """`draw`: "generator" (torch.multinomial with the generator given), "argmax" (T3), "global" (T4: multinomial
    from the global random state), "numpy" or "numpy_legacy" (T4: NumPy seeded with the generator's seed, as a NumPy
    user seeds it: `default_rng(seed).choice`, or `np.random.seed(seed)` then `np.random.choice`: reproducible, but
    not the generator's draws); `no_grad=False`: the model runs with autograd on (T5)."""
    tokens, state = [start], None
    numpy = _numpy_source(draw, generator)
    with torch.no_grad() if no_grad else contextlib.nullcontext():
        for _ in range(steps):
            logits, new_state = model(torch.tensor([[tokens[-1]]]), state if carry else None)
            state = new_state
            scaled = logits[0, -1] / temperature if scale == "divide" else logits[0, -1] * temperature
            tokens.append(_drawn(torch.softmax(scaled, dim=-1), draw, generator, numpy))
    return tokens


def _numpy_source(draw: str, generator: torch.Generator) -> np.random.Generator | np.random.RandomState | None:
    """NumPy's random source a NumPy user seeds with the generator's seed (the legacy one's own, so that the global
    state of NumPy in the grader stays as it was: np.random.seed(s) then np.random.choice draws as it does)."""
    if draw == "numpy":
        return np.random.default_rng(generator.initial_seed())
    if draw == "numpy_legacy":
        return np.random.RandomState(generator.initial_seed())
    return None


def _drawn(probs: torch.Tensor, draw: str, generator: torch.Generator, numpy) -> int:
    if draw == "argmax":
        return int(probs.argmax())
    if numpy is not None:
        p = probs.double().numpy()
        return int(numpy.choice(len(p), p=p / p.sum()))
    return int(torch.multinomial(probs, 1, generator=generator if draw == "generator" else None))


TABLE = Table(
    _sample,
    {
        "T1": {"scale": "multiply"},
        "T2": {"carry": False},
        "T3": {"draw": "argmax"},
        "T4": {"draw": "global"},
        "T4:numpy": {"draw": "numpy"},
        "T4:numpy_legacy": {"draw": "numpy_legacy"},
        "T5": {"no_grad": False},
    },
)


# -- what each variant costs (tests/autograder/checks/test_item_aspects.py holds it to it) --------------
# variant key -> {item aspect: why the variant loses it}; every other item of sample passes
COSTS: dict[str, dict[str, str]] = {
    "T1": {"values": VALUES},
    "T2": {"values": VALUES},
    "T3": {"values": VALUES},
    "T4": {"values": "the draws do not come from the generator given"},
    "T4:numpy": {"values": "the draws come from NumPy, seeded with the generator's seed"},
    "T4:numpy_legacy": {"values": "the draws come from NumPy, seeded with the generator's seed"},
    "T5": {"no_grad": "the model runs with autograd on"},
}

# mistakes in the values, and the aspect items of sample they keep
KEPT: dict[str, tuple[str, ...]] = {
    "T4": ("no_grad", "legal_inputs"),
    "T4:numpy": ("no_grad", "legal_inputs"),
}

# mistakes made at once: each is named, however many (not only pairs)
AT_ONCE = (
    "T1+T2+T4",
    "T1+T4:numpy",
)

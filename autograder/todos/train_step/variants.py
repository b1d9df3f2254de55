"""train_step's known-bug versions: one mistaken implementation, and the options that make each mistake.

`TABLE` holds, for each variant key of its mistakes (record.toml: an id, or an id and a form: "S5:step"), the options
of the mistaken implementation that make it; the checks run these beside the student's code and name the variant whose
outputs match (autograder/checks/variants.py). `COSTS`, `KEPT` and `AT_ONCE` (below) say what each variant costs. Its
effect is on the module it is given (`in_place`): the release records that module.
"""

import torch
import torch.nn.functional as F
from torch import nn

from autograder.checks.variants import Table


def _train(
    model,
    batch,
    optimizer,
    clip=1.0,
    *,
    when="before",  # clipping "before" optimizer.step(), or "after" it
    how="norm",  # clip_grad_norm_, or clip_grad_"value"_
    zero=True,
    report="after",  # the norm "after" clipping, or "before" (what clip_grad_norm_ returns)
    scores="logits",  # "logits", or "softmax" (probabilities into cross_entropy)
):
    tokens, lengths, labels = batch
    if zero:
        optimizer.zero_grad()
    logits = model(tokens, lengths)
    F.cross_entropy(logits if scores == "logits" else logits.softmax(dim=-1), labels).backward()
    returned = None
    if clip is not None and when == "before":
        clipper = nn.utils.clip_grad_norm_ if how == "norm" else nn.utils.clip_grad_value_
        returned = clipper(model.parameters(), clip)
    used = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters() if p.grad is not None]))
    optimizer.step()
    if clip is not None and when == "after":
        nn.utils.clip_grad_norm_(model.parameters(), clip)
    return float(returned if report == "before" and returned is not None else used)


TABLE = Table(
    _train,
    {
        "K1": {"when": "after"},
        "K2": {"how": "value"},
        "K3": {"zero": False},
        "K4": {"report": "before"},
        "S5:step": {"scores": "softmax"},
    },
    in_place=True,  # its effect is on the module it is given
)


# -- what each variant costs (tests/autograder/checks/test_item_aspects.py holds it to it) --------------
# variant key -> {item aspect: why the variant loses it}; every other item of train_step passes
COSTS: dict[str, dict[str, str]] = {
    "K1": {"update": "the step uses the unclipped gradient"},
    "K2": {"update": "the step uses the gradient clipped entry by entry"},
    "K3": {"update": "the step adds the earlier steps' gradients"},
    "K4": {"clipped_norm": "it reports the norm before clipping, not the step it took"},
    "S5:step": {"update": "the step follows the gradient of the loss of probabilities"},
}

# mistakes in the values, and the aspect items of train_step they keep
KEPT: dict[str, tuple[str, ...]] = {
    "K3": ("clipped_norm", "legal_inputs"),
    "K1": ("clipped_norm", "legal_inputs"),  # clip=None asks for no clipping: K1 clips nothing either
}

# mistakes made at once: each is named, however many (not only pairs)
AT_ONCE = (
    "K1+K3",
    "K3+K4",
)

"""next_token_loss's known-bug versions: one mistaken implementation, and the options that make each mistake.

`TABLE` holds, for each variant key of its mistakes (record.toml: an id, or an id and a form: "S1:trimmed"), the
options of the mistaken implementation that make it; the checks run these beside the student's code and name the
variant whose outputs match (autograder/checks/variants.py). `COSTS`, `KEPT` and `AT_ONCE` (below) say what each
variant costs.
"""

import torch
import torch.nn.functional as F

from autograder.checks.catalogue import VALUES
from autograder.checks.variants import Table

SHIFTS = {  # inputs and targets: the reference's "next", and the mistakes' own
    "next": lambda tokens: (tokens[:, :-1], tokens[:, 1:]),
    "none": lambda tokens: (tokens, tokens),
    "trimmed": lambda tokens: (tokens[:, :-1], tokens[:, :-1]),
    "previous": lambda tokens: (tokens[:, 1:], tokens[:, :-1]),
}


def _next_token(
    model,
    tokens,
    pad_id=None,
    *,
    shift="next",
    flatten="rows",  # "rows" (N, vocab); "vocab_first" (logits.reshape(vocab, -1)); "none" ((B, L, V) straight in)
    padding="ignored",  # "ignored", "counted", "denominator" (left out of the sum, counted in the mean), or
    # "inputs" (the mask taken from the inputs: the position whose target is the first pad counts)
    scores="logits",  # "logits", "softmax" (probabilities into cross_entropy), "nll" (probabilities into nll_loss)
    graph=True,  # False (S6): the loss's number turned back into a tensor, requires_grad=True but no graph
    in_place=False,  # L3: the padding targets set to -100 in the caller's tokens (targets[targets == pad_id] = -100)
):
    loss = _next_token_graph(model, tokens, pad_id, shift, flatten, padding, scores, in_place)
    return loss if graph else torch.tensor(loss.item(), requires_grad=True)


def _next_token_graph(model, tokens, pad_id, shift, flatten, padding, scores, in_place=False):
    inputs, targets = SHIFTS[shift](tokens)
    logits, _ = model(inputs)
    if in_place and pad_id is not None:  # the targets are a view of the caller's tokens
        targets[targets == pad_id] = -100
        pad_id = -100
    vocab = logits.shape[-1]
    given = logits if scores == "logits" else logits.softmax(dim=-1)
    loss = F.nll_loss if scores == "nll" else F.cross_entropy
    if flatten == "none":
        given, flat = given, targets
    elif flatten == "vocab_first":
        given, flat = given.reshape(vocab, -1).T, targets.reshape(-1)
    else:
        given, flat = given.reshape(-1, vocab), targets.reshape(-1)
    ignore = -100 if pad_id is None or padding != "ignored" else pad_id
    if padding == "denominator":
        losses = loss(given, flat, reduction="none")
        kept = torch.ones_like(losses) if pad_id is None else (flat != pad_id).to(losses)
        return (losses * kept).sum() / losses.numel()
    if padding == "inputs":
        losses = loss(given, flat, reduction="none").reshape(-1)
        kept = torch.ones_like(losses) if pad_id is None else (inputs.reshape(-1) != pad_id).to(losses)
        return (losses * kept).sum() / kept.sum()
    return loss(given, flat, ignore_index=ignore)


TABLE = Table(
    _next_token,
    {
        "S1": {"shift": "none"},
        "S1:trimmed": {"shift": "trimmed"},
        "S2": {"shift": "previous"},
        "S3": {"flatten": "vocab_first"},
        "S3:unflattened": {"flatten": "none"},
        "S4": {"padding": "counted"},
        "S4:denominator": {"padding": "denominator"},
        "S4:inputs": {"padding": "inputs"},
        "S5": {"scores": "softmax"},
        "S5:nll": {"scores": "nll"},
        "S6": {"graph": False},
        "L3:inputs": {"in_place": True},
    },
)


# -- what each variant costs (tests/autograder/checks/test_item_aspects.py holds it to it) --------------
# variant key -> {item aspect: why the variant loses it}; every other item of next_token_loss passes
COSTS: dict[str, dict[str, str]] = {
    "S1": {"values": VALUES, "padding": VALUES},
    "S1:trimmed": {"values": VALUES, "padding": VALUES},
    "S2": {"values": VALUES, "padding": VALUES},
    "S3": {"values": VALUES, "padding": VALUES},
    "S3:unflattened": {"values": VALUES, "padding": VALUES},
    "S4": {"padding": "the padding targets are counted (without pad_id it is right)"},
    "S4:denominator": {"padding": "the padding targets are counted in the mean"},
    "S4:inputs": {"padding": "the mask comes from the inputs: the first pad target counts"},
    "S5": {"values": VALUES, "padding": VALUES},
    "S5:nll": {"values": VALUES, "padding": VALUES},
    "S6": {"gradients": "the loss is a number made a tensor again: no gradient reaches the model"},
    "L3:inputs": {
        "padding": "it marks the padding targets -100 in the caller's tokens",
        "gradients": "writing into the tokens the embedding read breaks its backward",
    },
}

# mistakes in the values, and the aspect items of next_token_loss they keep
KEPT: dict[str, tuple[str, ...]] = {
    "S5": ("gradients", "legal_inputs"),
}

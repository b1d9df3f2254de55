"""SequenceClassifier.forward's known-bug versions: one mistaken implementation, and the options that make each mistake.

`TABLE` holds, for each variant key of its mistakes (record.toml: an id, or an id and a form: "C1:pooled"), the
options of the mistaken implementation that make it; the checks run these beside the student's code and name the
variant whose outputs match (autograder/checks/variants.py). `COSTS`, `KEPT` and `AT_ONCE` (below) say what each
variant costs.
"""

import torch

from autograder.checks.catalogue import VALUES
from autograder.checks.variants import Table
from solutions import padding as reference_padding


def _classify(
    model,
    tokens,
    lengths=None,
    *,
    last="gather",  # "gather"; "padded" output[:, -1]; "row" output[-1]; "early" gather_final(output, lengths - 1)
    mean="real",  # "real", or "padding" (the mean over every step)
    top="real",  # max pooling over: "real" steps, "padding" too, or "zeroed" (the padding set to 0)
    axis=1,  # the time axis mean and max pool over (0: the batch's)
    transposed=False,  # (length, batch, embed) fed to a batch_first layer, turned back afterwards
    in_place=False,  # L3: the caller's lengths made the last steps' indices in place (lengths -= 1)
):
    if transposed:
        output = model.rnn(model.embedding(tokens).transpose(0, 1))[0].transpose(0, 1)
    else:
        output, _ = model.rnn(model.embedding(tokens))
    if lengths is None:
        lengths = torch.full((tokens.shape[0],), tokens.shape[1])
    real = (torch.arange(tokens.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(2)
    if in_place and model.pooling == "last":
        lengths -= 1
        return model.head(output[torch.arange(len(lengths)), lengths])
    if model.pooling == "last":
        pooled = {
            "padded": lambda: output[:, -1],
            "row": lambda: output[-1],
            "early": lambda: reference_padding.gather_final(output, lengths - 1),  # index -1 raises
            "early_indexed": lambda: output[torch.arange(len(lengths)), lengths - 2],  # index -1 wraps round
            "gather": lambda: output[torch.arange(len(lengths)), lengths - 1],
        }[last]()
    elif model.pooling == "mean":
        pooled = output.mean(axis) if mean == "padding" or axis == 0 else reference_padding.masked_mean(output, lengths)
    else:
        padding = {"real": -torch.inf, "zeroed": 0.0}.get(top)
        pooled = output.amax(axis) if padding is None or axis == 0 else output.masked_fill(~real, padding).amax(1)
    return model.head(pooled)


TABLE = Table(
    _classify,
    {
        "C1": {"last": "row"},
        "C1:pooled": {"axis": 0},
        "C1:transposed": {"transposed": True},
        "C2": {"last": "padded"},
        "C3": {"mean": "padding"},
        "C4": {"top": "padding"},
        "C4:zeroed": {"top": "zeroed"},
        "C5": {"last": "early"},
        "C5:indexed": {"last": "early_indexed"},
        "L3:inputs": {"in_place": True},
    },
)


# -- what each variant costs (tests/autograder/checks/test_item_aspects.py holds it to it) --------------
# variant key -> {item aspect: why the variant loses it}; every other item of SequenceClassifier.forward passes
COSTS: dict[str, dict[str, str]] = {
    "C1": {"last_pooling": VALUES, "padded_batch": VALUES},
    "C1:pooled": {"mean_max_pooling": VALUES, "padded_batch": VALUES},
    "C1:transposed": {
        "last_pooling": VALUES,
        "mean_max_pooling": VALUES,
        "padded_batch": VALUES,
    },
    "C2": {"padded_batch": "on a padded batch it reads the state after the padding"},
    "C3": {"padded_batch": "on a padded batch its mean covers the padding"},
    "C4": {"padded_batch": "on a padded batch its max covers the padding"},
    "C4:zeroed": {"padded_batch": "on a padded batch a padding of 0 competes"},
    "C5": {
        "last_pooling": "every row is read one step early",
        "padded_batch": "every row is read one step early",
    },
    "C5:indexed": {
        "last_pooling": "every row is read one step early",
        "padded_batch": "every row is read one step early",
    },
    "L3:inputs": {
        "padded_batch": "it makes the caller's lengths the last steps' indices in place (lengths -= 1)",
    },
}

# mistakes in the values, and the aspect items of SequenceClassifier.forward they keep
KEPT: dict[str, tuple[str, ...]] = {
    # a row of length 1 makes C5 ask gather for index -1, but C5 shows on every batch: the value items take it
    "C5": ("legal_inputs", "mean_max_pooling"),
    "C2": ("legal_inputs", "last_pooling"),
}

# mistakes made at once: each is named, however many (not only pairs)
AT_ONCE = (
    "C2+C3+C4",
    "C3+L3:inputs",  # the mean over the padding and the lengths changed in place
    "C1+C3",  # the last row's logits of the wrong shape do not hide the mean's mistake
)

"""Known-bug versions of the reference, one per catalogue mistake (and its common forms).

A check runs these on its own inputs; when a student's output matches a variant on
every input, the feedback names the mistake. Each function has one mistaken
implementation with keyword options, and a `Table` of the options each mistake sets:
keys are catalogue ids, with a suffix after ':' for another form of the same mistake
("R3:ih"). Two mistakes of one function whose options do not overlap make a pair
("K3+S5": never zeroed and softmax before the loss), tried when no single one matches.
"""

import contextlib
import functools
import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from solutions import padding as reference_padding


@dataclass(frozen=True)
class Table(Mapping[str, Callable[..., Any]]):
    """One function's known mistakes: each key's options of the function's mistaken implementation."""

    implementation: Callable[..., Any]
    options: dict[str, dict[str, Any]]

    def __getitem__(self, key: str) -> Callable[..., Any]:
        """The variant of a key: one mistake ("R1:hh") or a pair of them ("R1:hh+R6")."""
        merged: dict[str, Any] = {}
        for part in key.split("+"):
            merged.update(self.options[part])
        return functools.partial(self.implementation, **merged)

    def __iter__(self) -> Iterator[str]:
        return iter(self.options)

    def __len__(self) -> int:
        return len(self.options)

    def knows(self, key: str) -> bool:
        return all(part in self.options for part in key.split("+"))

    @functools.cached_property
    def pair_keys(self) -> tuple[str, ...]:
        """Every two mistakes of different ids whose options can be combined, in the table's order."""
        return self.combination_keys(2)

    @functools.cached_property
    def most(self) -> int:
        """The most mistakes one variant can combine: one per id."""
        return len({key.partition(":")[0] for key in self.options})

    def combination_keys(self, size: int) -> tuple[str, ...]:
        """Every `size` mistakes of different ids whose options can be combined ("C2+C3+C4"), in the table's order."""
        if size not in self._combinations:
            keys = itertools.combinations(self.options, size)
            self._combinations[size] = tuple("+".join(keys) for keys in keys if self._combinable(keys))
        return self._combinations[size]

    @functools.cached_property
    def _combinations(self) -> dict[int, tuple[str, ...]]:
        return {}  # size -> its keys, computed when first asked for

    def _combinable(self, keys: tuple[str, ...]) -> bool:
        ids = {key.partition(":")[0] for key in keys}
        options = [set(self.options[key]) for key in keys]
        return len(ids) == len(keys) and sum(map(len, options)) == len(set().union(*options))

    def pairs(self, among: Callable[[str], bool] = lambda key: True) -> dict[str, Callable[..., Any]]:
        """The combinations' variants (two mistakes or more), optionally only of mistakes for which `among(key)`
        holds: any combination of the mistakes a test sees is named, not only pairs."""
        chosen = [key for key in self.options if among(key)]
        found: dict[str, Callable[..., Any]] = {}
        for size in range(2, len(chosen) + 1):
            keys = (keys for keys in itertools.combinations(chosen, size) if self._combinable(keys))
            found.update({"+".join(keys): self["+".join(keys)] for keys in keys})
        return found


# -- rnn_forward ---------------------------------------------------------------------------
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


RNN_FORWARD = Table(  # R1's forms: "ih" raises a shape error first whenever "both" does, so it is tried first
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


# -- lstm_step -----------------------------------------------------------------------------
def _lstm(x, state, w_ih, w_hh, b_ih, b_hh, *, order="ifgo", cell="add", in_place=False, unpack="hc"):
    h, c = state if unpack == "hc" else reversed(state)  # "ch" (L4): c, h = state, for PyTorch's (h, c)
    blocks = dict(zip(order, (x @ w_ih.T + b_ih + h @ w_hh.T + b_hh).chunk(4, dim=1), strict=True))
    i, f, g, o = torch.sigmoid(blocks["i"]), torch.sigmoid(blocks["f"]), torch.tanh(blocks["g"]), blocks["o"]
    c_new = {"add": f * c + i * g, "multiply": f * c * i * g, "no_old": i * g}[cell]
    if in_place:  # L3: the new cell written into the caller's (c.mul_(f).add_(i * g))
        c_new = c.copy_(c_new)
    return torch.sigmoid(o) * torch.tanh(c_new), c_new


LSTM_STEP = Table(
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


# -- encode_packed -------------------------------------------------------------------------
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


ENCODE_PACKED = Table(
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


# -- gather_final / masked_mean --------------------------------------------------------------
def _gather(output, lengths, *, index="lengths - 1", squeeze="step"):
    rows = torch.arange(len(lengths))
    if index == "last":
        picked = output[:, -1]
    elif index == "lengths":
        picked = output[rows, lengths]
    elif index == "clamped":
        picked = output[rows, lengths.clamp(max=output.shape[1] - 1)]
    else:
        picked = output[rows, lengths - 1]
    return picked.unsqueeze(1).squeeze() if squeeze == "every" else picked  # "every": .squeeze() with no dim


GATHER_FINAL = Table(
    _gather,
    {
        "G1": {"index": "last"},
        "G2": {"index": "lengths"},
        "G2:clamped": {"index": "clamped"},
        "G5": {"squeeze": "every"},
    },
)


def _mean(output, lengths, *, total="real", divide="lengths", in_place=False, mask="torch"):
    """`mask`: "torch", or "numpy" (R8: built in NumPy as floats, float64, which makes a float32 mean float64)."""
    real = torch.arange(output.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)
    if in_place:  # L3: the padding zeroed in the caller's own output (output.masked_fill_(~mask, 0))
        output.masked_fill_(~real.unsqueeze(2), 0.0)
    weights = real.unsqueeze(2) if mask == "torch" else torch.from_numpy(real.numpy().astype(float)).unsqueeze(2)
    summed = (output * weights).sum(1) if total == "real" else output.sum(1)
    return summed / (lengths.unsqueeze(1).to(output) if divide == "lengths" else output.shape[1])


MASKED_MEAN = Table(
    _mean,
    {
        "G3": {"divide": "padded"},
        "G3:plain": {"total": "every", "divide": "padded"},
        "G4": {"total": "every"},
        "L3:inputs": {"in_place": True},
        "R8:mask": {"mask": "numpy"},
    },
)


# -- set_forget_bias -----------------------------------------------------------------------
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


SET_FORGET_BIAS = Table(
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
)


# -- next_token_loss -----------------------------------------------------------------------
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


NEXT_TOKEN_LOSS = Table(
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


# -- sample ----------------------------------------------------------------------------------
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


SAMPLE = Table(
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


# -- SequenceClassifier.forward ----------------------------------------------------------------
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


CLASSIFIER_FORWARD = Table(
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


# -- train_step ------------------------------------------------------------------------------
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


TRAIN_STEP = Table(
    _train,
    {
        "K1": {"when": "after"},
        "K2": {"how": "value"},
        "K3": {"zero": False},
        "K4": {"report": "before"},
        "S5:step": {"scores": "softmax"},
    },
)


# -- bag_of_counts ---------------------------------------------------------------------------
def _bag(tokens, *, digits="1-9", fill_nine=False, counts_as="float"):
    """`digits`: the columns counted ("1-9"; "0-8", "0-9", "1-8"; "1-max", up to the batch's largest token);
    `counts_as`: "float", or "integer" (B3: the sum's int64 left as is)."""
    tokens = torch.as_tensor(tokens)
    low, high = {"1-9": (1, 9), "0-8": (0, 8), "0-9": (0, 9), "1-8": (1, 8), "1-max": (1, int(tokens.max()))}[digits]
    counts = (tokens.unsqueeze(-1) == torch.arange(low, high + 1)).sum(1)
    counts = (counts.float() if counts_as == "float" else counts).numpy()
    return np.concatenate([counts, np.zeros((len(counts), 1), dtype=counts.dtype)], axis=1) if fill_nine else counts


BAG_OF_COUNTS = Table(
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


# -- every table, by the function it stands in for (as a TODO names it) -------------------------
BY_FUNCTION: dict[str, Table] = {
    "rnn_forward": RNN_FORWARD,
    "lstm_step": LSTM_STEP,
    "encode_packed": ENCODE_PACKED,
    "gather_final": GATHER_FINAL,
    "masked_mean": MASKED_MEAN,
    "set_forget_bias": SET_FORGET_BIAS,
    "next_token_loss": NEXT_TOKEN_LOSS,
    "sample": SAMPLE,
    "SequenceClassifier.forward": CLASSIFIER_FORWARD,
    "train_step": TRAIN_STEP,
    "bag_of_counts": BAG_OF_COUNTS,
}
IN_PLACE = {"set_forget_bias", "train_step"}  # their effect is on the module they are given

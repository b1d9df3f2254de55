"""Known-bug versions of the reference, one per catalogue mistake (and its common forms).

A check runs these on its own inputs; when a student's output matches a variant on
every input, the feedback names the mistake. Keys are catalogue ids, with a suffix
after ':' for a second form of the same mistake ("R3:ih"), and '+' between the ids of
a variant that makes two mistakes at once ("C3+C4").
"""

import copy

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from solutions import padding as reference_padding


# -- rnn_forward ---------------------------------------------------------------------------
def _rnn(x, w_ih, w_hh, b_ih, b_hh, h0, *, transpose="both", carry=True, use_ih=True, use_hh=True):
    batch, length, _ = x.shape
    start = x.new_zeros(batch, w_hh.shape[0]) if h0 is None else h0[0]
    h, states = start, []
    a = w_ih if transpose in ("neither", "hh") else w_ih.T  # transpose names the one done right
    b = w_hh if transpose in ("neither", "ih") else w_hh.T
    for t in range(length):
        previous = h if carry else start
        h = torch.tanh(x[:, t] @ a + previous @ b + (b_ih if use_ih else 0) + (b_hh if use_hh else 0))
        states.append(h)
    return torch.stack(states, dim=1), h.unsqueeze(0)


RNN_FORWARD = {  # R1's forms: "ih" raises a shape error first whenever "both" does, so it is tried first
    "R1:ih": lambda *a: _rnn(*a, transpose="hh"),
    "R1:hh": lambda *a: _rnn(*a, transpose="ih"),
    "R1": lambda *a: _rnn(*a, transpose="neither"),
    "R2": lambda *a: _rnn(*a, carry=False),
    "R3": lambda *a: _rnn(*a, use_hh=False),
    "R3:ih": lambda *a: _rnn(*a, use_ih=False),
    "R4": lambda x, *a: _rnn(x.transpose(0, 1), *a),
    "R5": lambda *a: (lambda out: (out[0], out[0][:, :1].transpose(0, 1)))(_rnn(*a)),
}


# -- lstm_step -----------------------------------------------------------------------------
def _lstm(x, state, w_ih, w_hh, b_ih, b_hh, *, order="ifgo", cell="add"):
    h, c = state
    blocks = dict(zip(order, (x @ w_ih.T + b_ih + h @ w_hh.T + b_hh).chunk(4, dim=1), strict=True))
    i, f, g, o = torch.sigmoid(blocks["i"]), torch.sigmoid(blocks["f"]), torch.tanh(blocks["g"]), blocks["o"]
    c_new = {"add": f * c + i * g, "multiply": f * c * i * g, "no_old": i * g}[cell]
    return torch.sigmoid(o) * torch.tanh(c_new), c_new


LSTM_STEP = {
    "L1": lambda *a: _lstm(*a, order="ifog"),
    "L2": lambda *a: _lstm(*a, cell="multiply"),
    "L2:no_old": lambda *a: _lstm(*a, cell="no_old"),
}


# -- encode_packed -------------------------------------------------------------------------
def _final(state):
    return (state[0] if isinstance(state, tuple) else state)[-1]


def _unpacked(rnn: nn.Module, embedded, lengths, *, masked=False):
    output, state = rnn(embedded)
    if masked:  # the padding steps zeroed afterwards: the output looks packed, the final state is not
        output = output * (torch.arange(embedded.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(2)
    return output, _final(state)


def _sorted_order(rnn: nn.Module, embedded, lengths):
    order = lengths.argsort(descending=True)
    packed = pack_padded_sequence(embedded[order], lengths[order], batch_first=True)
    output, state = rnn(packed)
    output, _ = pad_packed_sequence(output, batch_first=True, total_length=embedded.shape[1])
    return output, _final(state)


def _time_major(rnn: nn.Module, embedded, lengths, *, pack=False, unpack=True):
    """batch_first left out when packing (`pack=False`) or when unpacking (`unpack=False`)."""
    packed = pack_padded_sequence(embedded, lengths, batch_first=pack, enforce_sorted=False)
    output, state = rnn(packed)
    output, _ = pad_packed_sequence(output, batch_first=unpack, total_length=embedded.shape[1])
    return output, _final(state)


ENCODE_PACKED = {
    "P1": _unpacked,
    "P1:masked": lambda *a: _unpacked(*a, masked=True),
    "P2": _sorted_order,
    "P3": _time_major,
    "P3:unpacked": lambda *a: _time_major(*a, pack=True, unpack=False),
}


# -- gather_final / masked_mean --------------------------------------------------------------
GATHER_FINAL = {
    "G1": lambda output, lengths: output[:, -1],
    "G2": lambda output, lengths: output[torch.arange(len(lengths)), lengths],
    "G2:clamped": lambda output, lengths: output[torch.arange(len(lengths)), lengths.clamp(max=output.shape[1] - 1)],
}


def _mean_over_max_length(output, lengths):
    real = torch.arange(output.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)
    return (output * real.unsqueeze(2)).sum(1) / output.shape[1]


MASKED_MEAN = {"G3": _mean_over_max_length, "G3:plain": lambda output, lengths: output.mean(dim=1)}


# -- set_forget_bias -----------------------------------------------------------------------
def _forget(lstm: nn.LSTM, value: float, *, block: int = 1, both=False, layers=None, reverse=True) -> nn.LSTM:
    hidden = lstm.hidden_size
    part = slice(block * hidden, (block + 1) * hidden)
    with torch.no_grad():
        for name, parameter in lstm.named_parameters():
            layer = int(name.split("_l")[1].split("_")[0]) if "_l" in name else 0
            if (layers is not None and layer not in layers) or (not reverse and name.endswith("_reverse")):
                continue
            if name.startswith("bias_ih"):
                parameter[part] = value
            elif name.startswith("bias_hh"):
                parameter[part] = value if both else 0.0
    return lstm


def _new_parameters(lstm: nn.LSTM, value: float = 1.0) -> nn.LSTM:
    """The right values, but in new Parameter objects (F4): an optimizer built earlier holds the old ones."""
    values = _forget(copy.deepcopy(lstm), value)
    for name, parameter in values.named_parameters():
        if name.startswith("bias"):
            setattr(lstm, name, nn.Parameter(parameter.detach().clone()))
    return lstm


SET_FORGET_BIAS = {
    "F1": lambda lstm, value=1.0: _forget(lstm, value, block=0),
    "F1:last": lambda lstm, value=1.0: _forget(lstm, value, block=3),
    "F1:cell": lambda lstm, value=1.0: _forget(lstm, value, block=2),
    "F2": lambda lstm, value=1.0: _forget(lstm, value, both=True),
    "F3": lambda lstm, value=1.0: _forget(lstm, value, layers={0}),
    "F3:forward": lambda lstm, value=1.0: _forget(lstm, value, reverse=False),
    "F3:first": lambda lstm, value=1.0: _forget(lstm, value, layers={0}, reverse=False),
    "F4": _new_parameters,
}


# -- next_token_loss -----------------------------------------------------------------------
def _loss(model, inputs, targets, pad_id):
    logits, _ = model(inputs)
    ignore = -100 if pad_id is None else pad_id
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=ignore)


def _mean_over_all_positions(model, tokens, pad_id=None):
    logits, _ = model(tokens[:, :-1])
    targets = tokens[:, 1:].reshape(-1)
    losses = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets, reduction="none")
    kept = torch.ones_like(losses) if pad_id is None else (targets != pad_id).to(losses)
    return (losses * kept).sum() / losses.numel()


def _scrambled(model, tokens, pad_id=None):
    logits, _ = model(tokens[:, :-1])
    vocab = logits.shape[-1]
    ignore = -100 if pad_id is None else pad_id
    return F.cross_entropy(logits.reshape(vocab, -1).T, tokens[:, 1:].reshape(-1), ignore_index=ignore)


def _unflattened(model, tokens, pad_id=None):
    """(batch, length, vocab) straight into cross_entropy: it reads axis 1, the positions, as the classes."""
    logits, _ = model(tokens[:, :-1])
    return F.cross_entropy(logits, tokens[:, 1:], ignore_index=-100 if pad_id is None else pad_id)


NEXT_TOKEN_LOSS = {
    "S1": lambda model, tokens, pad_id=None: _loss(model, tokens, tokens, pad_id),
    "S1:trimmed": lambda model, tokens, pad_id=None: _loss(model, tokens[:, :-1], tokens[:, :-1], pad_id),
    "S2": lambda model, tokens, pad_id=None: _loss(model, tokens[:, 1:], tokens[:, :-1], pad_id),
    "S3": _scrambled,
    "S3:unflattened": _unflattened,
    "S4": lambda model, tokens, pad_id=None: _loss(model, tokens[:, :-1], tokens[:, 1:], None),
    "S4:denominator": _mean_over_all_positions,
}


# -- sample ----------------------------------------------------------------------------------
def _sample(model, start, steps, temperature, generator, *, scale="divide", carry=True, draw=True):
    tokens, state = [start], None
    with torch.no_grad():
        for _ in range(steps):
            logits, new_state = model(torch.tensor([[tokens[-1]]]), state if carry else None)
            state = new_state
            scaled = logits[0, -1] / temperature if scale == "divide" else logits[0, -1] * temperature
            probs = torch.softmax(scaled, dim=-1)
            token = torch.multinomial(probs, 1, generator=generator) if draw else probs.argmax()
            tokens.append(int(token))
    return tokens


SAMPLE = {
    "T1": lambda *a: _sample(*a, scale="multiply"),
    "T2": lambda *a: _sample(*a, carry=False),
    "T3": lambda *a: _sample(*a, draw=False),
}


# -- SequenceClassifier.forward ----------------------------------------------------------------
def _classify(
    model,
    tokens,
    lengths=None,
    *,
    last="gather",
    over_padding=(),
    padding=-torch.inf,  # what the real steps' maximum competes with
    batch_axis=False,
    transposed=False,
):
    if transposed:  # (length, batch, embed) fed to a batch_first layer, turned back afterwards
        output = model.rnn(model.embedding(tokens).transpose(0, 1))[0].transpose(0, 1)
    else:
        output, _ = model.rnn(model.embedding(tokens))
    if lengths is None:
        lengths = torch.full((tokens.shape[0],), tokens.shape[1])
    if batch_axis:
        return model.head(output[-1])
    if model.pooling == "last":
        pooled = output[:, -1] if last == "padded" else output[torch.arange(len(lengths)), lengths - 1]
    elif model.pooling == "mean":
        pooled = output.mean(1) if "mean" in over_padding else reference_padding.masked_mean(output, lengths)
    else:
        real = torch.arange(tokens.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)
        pooled = output.amax(1) if "max" in over_padding else output.masked_fill(~real.unsqueeze(2), padding).amax(1)
    return model.head(pooled)


CLASSIFIER_FORWARD = {
    "C1": lambda *a: _classify(*a, batch_axis=True),
    "C1:transposed": lambda *a: _classify(*a, transposed=True),
    "C2": lambda *a: _classify(*a, last="padded"),
    "C3": lambda *a: _classify(*a, over_padding=("mean",)),
    "C3+C4": lambda *a: _classify(*a, over_padding=("mean", "max")),
    "C4": lambda *a: _classify(*a, over_padding=("max",)),
    "C4:zeroed": lambda *a: _classify(*a, padding=0.0),
}


# -- train_step ------------------------------------------------------------------------------
def _train(model, batch, optimizer, clip=1.0, *, when="before", how="norm", zero=True):
    tokens, lengths, labels = batch
    if zero:
        optimizer.zero_grad()
    F.cross_entropy(model(tokens, lengths), labels).backward()
    if clip is not None and when == "before":
        clipper = nn.utils.clip_grad_norm_ if how == "norm" else nn.utils.clip_grad_value_
        clipper(model.parameters(), clip)
    used = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters() if p.grad is not None]))
    optimizer.step()
    if clip is not None and when == "after":
        nn.utils.clip_grad_norm_(model.parameters(), clip)
    return float(used)


TRAIN_STEP = {
    "K1": lambda *a: _train(*a, when="after"),
    "K2": lambda *a: _train(*a, how="value"),
    "K3": lambda *a: _train(*a, zero=False),
}


# -- bag_of_counts ---------------------------------------------------------------------------
def _counts(tokens, digits):
    return (torch.as_tensor(tokens).unsqueeze(-1) == torch.tensor(digits)).sum(1).float().numpy()


def _without_nine(tokens):
    counts = _counts(tokens, range(1, 9))
    return np.concatenate([counts, np.zeros((len(counts), 1), dtype=counts.dtype)], axis=1)


BAG_OF_COUNTS = {
    "B1": lambda tokens: _counts(tokens, range(0, 9)),
    "B1:ten": lambda tokens: _counts(tokens, range(0, 10)),  # a column for the padding too
    "B1:eight": lambda tokens: _counts(tokens, range(1, 9)),
    "B1:nine_zero": _without_nine,
}


# -- every table, by the function it stands in for (as a TODO names it) -------------------------
BY_FUNCTION = {
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

"""Checks for TODO 3 (encode_packed), TODO 4 (gather_final) and TODO 5 (masked_mean)."""

import torch
from torch import nn

from autograder.checks import variants
from autograder.checks.compare import Comparison, expect_pair, expect_tensor, fail, variant_outputs, with_diagnosis
from autograder.checks.inputs import garbage_after, normal, seeded_module
from autograder.student import Raised
from solutions import padding as reference

LAYERS = {"RNN": nn.RNN, "GRU": nn.GRU, "LSTM": nn.LSTM}
# (lengths, padded length): unsorted with a length-1 row; all full length; mostly padding, padded beyond
# the longest row; a batch of 1 padded beyond its row
LENGTHS = [([3, 5, 1, 4], 5), ([6, 6, 6], 6), ([1, 2, 1, 7, 1], 9), ([4], 6)]


def packed_cases(garbage: bool) -> list[tuple[str, nn.Module, torch.Tensor, torch.Tensor, str]]:
    cases = []
    for number, (kind, (rows, padded)) in enumerate((kind, case) for kind in LAYERS for case in LENGTHS):
        lengths = torch.tensor(rows)
        features, hidden = 3, 4
        embedded = normal(len(rows), padded, features, seed=number)
        pad = garbage_after(embedded, lengths, seed=number) if garbage else garbage_after(embedded, lengths, number, 0)
        layer = seeded_module(LAYERS[kind], features, hidden, batch_first=True, seed=number)
        context = f"nn.{kind}, lengths {rows} padded to {padded}, padding {'non-zero' if garbage else 'zeros'}"
        cases.append((kind, layer, pad, lengths, context))
    return cases


TIME_MAJOR_ERRORS = ("exceeds dimension size", "len(lengths)", "Expected `len(lengths)`")


def _encode(student, layer, embedded: torch.Tensor, lengths: torch.Tensor):
    """Call encode_packed; a packing read time-major (P3) usually fails on the lengths."""
    try:
        return student.run("padding.encode_packed", layer, embedded, lengths).value
    except Raised as error:
        if error.error_type == "RuntimeError" and any(text in error.error_message for text in TIME_MAJOR_ERRORS):
            fail(
                with_diagnosis("P3", f"encode_packed raised {error.error_type}: {error.error_message.splitlines()[0]}")
            )
        raise


def _checked_output(output, embedded: torch.Tensor, lengths: torch.Tensor, hidden: int) -> torch.Tensor:
    """The output, if it is (batch, max_length, hidden); a time-major output is P3."""
    batch, length, _ = embedded.shape
    shape = tuple(output.shape) if type(output) is torch.Tensor else None
    if shape == (length, batch, hidden) and batch != length:
        fail(with_diagnosis("P3", f"output has shape {shape}; expected {(batch, length, hidden)}."))
    if shape == (batch, int(lengths.max()), hidden) and length > int(lengths.max()):
        fail(
            f"output has shape {shape}; expected {(batch, length, hidden)}: the batch is padded to {length} steps, "
            f"beyond its longest row, and pad_packed_sequence stops at the longest row unless given "
            f"total_length=embedded.shape[1]."
        )
    return expect_tensor(output, "output", (batch, length, hidden))


def _compare_packed(student, which: str, garbage: bool) -> None:
    comparison = Comparison("encode_packed", time_axis={"output": 1})
    for _, layer, embedded, lengths, context in packed_cases(garbage):
        got = _encode(student, layer, embedded, lengths)
        output, h_n = expect_pair(got, "encode_packed", ("output", "h_n"))
        if which == "output":
            got = _checked_output(output, embedded, lengths, layer.hidden_size)
        else:
            got = expect_tensor(h_n, "h_n", (embedded.shape[0], layer.hidden_size))
        with torch.no_grad():
            expected = reference.encode_packed(layer, embedded, lengths)
            mistakes = variant_outputs(variants.ENCODE_PACKED, layer, embedded, lengths)
        index = 0 if which == "output" else 1
        comparison.add(which, got, expected[index], context, {k: v[index] for k, v in mistakes.items()})
    comparison.verdict()


def check_encode_packed_final_state(student) -> None:
    """h_n holds each row's state after its own last real step (RNN, GRU, LSTM)."""
    _compare_packed(student, "h_n", garbage=False)


def check_encode_packed_output(student) -> None:
    """output equals each row run alone, with zeros after the row's length."""
    _compare_packed(student, "output", garbage=False)


def check_encode_packed_skips_padding(student) -> None:
    """Garbage in the padding changes nothing: the layer never reads it."""
    _compare_packed(student, "h_n", garbage=True)
    _compare_packed(student, "output", garbage=True)


# -- gather_final / masked_mean ------------------------------------------------------------
def _pooled_cases() -> list[tuple[torch.Tensor, torch.Tensor, str]]:
    """Unsorted lengths, full rows, a batch of 1; the last in float64 (the result keeps the dtype)."""
    cases = []
    for number, rows in enumerate([[3, 5, 1, 4], [2, 1, 3], [6, 6], [1], [2, 4, 1]]):
        lengths = torch.tensor(rows)
        output = garbage_after(normal(len(rows), max(*rows, 2), 5, seed=number), lengths, seed=number)
        output = output.double() if number == 4 else output
        dtype = "" if output.dtype == torch.float32 else f" {str(output.dtype).removeprefix('torch.')}"
        cases.append((output, lengths, f"output {tuple(output.shape)}{dtype}, lengths {rows}"))
    return cases


def _compare_pooled(student, function: str, table: dict) -> None:
    comparison = Comparison(function)
    for output, lengths, context in _pooled_cases():
        try:
            got = student.run(f"padding.{function}", output, lengths).value
        except Raised as error:
            if (
                function == "gather_final"
                and error.error_type in ("IndexError", "RuntimeError")
                and ("out of bounds" in error.error_message or "out of range" in error.error_message)
            ):
                fail(with_diagnosis("G2", f"gather_final raised {error.error_type} on lengths {lengths.tolist()}."))
            raise
        got = expect_tensor(got, function, (output.shape[0], output.shape[2]), output.dtype)
        expected = getattr(reference, function)(output, lengths)
        comparison.add(function, got, expected, context, variant_outputs(table, output, lengths))
    comparison.verdict()


def check_gather_final_values(student) -> None:
    """Row i is output[i, lengths[i] - 1], for unsorted lengths, length 1 and full rows."""
    _compare_pooled(student, "gather_final", variants.GATHER_FINAL)


def check_masked_mean_values(student) -> None:
    """Row i is the mean of output[i, :lengths[i]]; the padding holds garbage."""
    _compare_pooled(student, "masked_mean", variants.MASKED_MEAN)

"""Correct pooling helpers, computed by the grader for a regrade that stands them in for the student's own.

When the classifier fails and the student's `gather_final` or `masked_mean` fails its own item too, the
grader runs the classifier's item again with stand-ins in the student's functions' place, so that the
classifier keeps what its own code earns. They are gather_final's and masked_mean's answers, so they never
leave the grader: the worker's stand-ins (runtime/proxies.py) send their tensors here, and `answer` checks
them and replies with the value alone, as every answer crosses: data, never code.
"""

from collections.abc import Callable
from typing import Any

import torch


def gather_final(output: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Row i's output at its last real step, lengths[i] - 1."""
    index = (lengths - 1).view(-1, 1, 1).expand(-1, 1, output.shape[2])
    return output.gather(1, index.to(output.device)).squeeze(1)


def masked_mean(output: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Row i's mean over its first lengths[i] steps, of output's dtype."""
    steps = torch.arange(output.shape[1], device=output.device)
    real = (steps.unsqueeze(0) < lengths.unsqueeze(1).to(output.device)).unsqueeze(2)
    total = torch.where(real, output, torch.zeros((), dtype=output.dtype)).sum(dim=1)
    return total / lengths.unsqueeze(1).to(output)


STANDINS: dict[str, Callable[..., Any]] = {"padding.gather_final": gather_final, "padding.masked_mean": masked_mean}
FLOATS = (torch.float32, torch.float64)


def answer(question: Any, names: tuple[str, ...], max_bytes: int) -> dict[str, Any]:
    """The grader's reply to a worker's question {"ask": name, "args": [output, lengths]}: {"answer": value}, or
    {"refused": why} where `name` is not one of the call's stand-ins (`names`) or the arguments are not what a
    correct helper takes (checked before any arithmetic; `output` at most `max_bytes`)."""
    name = question.get("ask") if isinstance(question, dict) else None
    if name not in names or name not in STANDINS:
        return {"refused": "the grader stands in no such function for this call"}
    args = question.get("args")
    problem = _problem(args, max_bytes) if type(args) is list else "its arguments did not arrive as a list"
    if problem:
        return {"refused": f"{name.split('.')[1]} (the grader's, standing in for yours) was called with {problem}"}
    with torch.no_grad():
        return {"answer": STANDINS[name](*args).clone()}


def _problem(args: list[Any], max_bytes: int) -> str:
    """What is wrong with (output, lengths) for a pooling helper, or "" when nothing is."""
    if len(args) != 2 or any(type(arg) is not torch.Tensor for arg in args):
        return "other arguments than two tensors (output, lengths)"
    output, lengths = args
    if output.dim() != 3 or output.dtype not in FLOATS:
        return f"an output of shape {tuple(output.shape)} and {output.dtype}: expected (batch, length, hidden) floats"
    if output.numel() * output.element_size() > max_bytes:
        return f"an output of {output.numel()} values, more than an answer may hold"
    if lengths.dim() != 1 or lengths.dtype != torch.int64 or len(lengths) != output.shape[0]:
        return f"lengths of shape {tuple(lengths.shape)} and {lengths.dtype}: expected ({output.shape[0]},) int64"
    if len(lengths) and not bool(((lengths >= 1) & (lengths <= output.shape[1])).all()):
        return f"lengths outside 1..{output.shape[1]}, the output's number of steps"
    return ""

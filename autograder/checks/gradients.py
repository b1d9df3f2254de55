"""Gradients judged apart from values: each one against the derivative of the student's own output.

A gradient item passes when autograd's gradient, along a random direction, equals the rate at which
the student's own output changes along it (a central difference), for every input. So a mistake in
the values (a missing transpose, a bias left out) keeps the gradient item, and a graph cut in the
loop (`.detach()`, `.data`, `.item()`, numpy) loses it. An output that gets no gradient to its first
input (x) at all has nothing to judge, and fails.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from autograder.checks.compare import fail

STEP = 2e-3  # the central difference's step along a direction of unit-variance entries (float32 inputs)
TOLERANCE = 2e-2  # relative (and absolute, below 1) gap allowed between the two rates; the reference's is < 2e-3
LESSON = 'Reread: Day 2, "Why the gradient dies" (backpropagating through t steps multiplies t derivatives).'


@dataclass(frozen=True)
class Judged:
    """One input the gradient is judged for: its name, the student's gradient, and their output moved."""

    name: str
    gradient: torch.Tensor | None
    direction: torch.Tensor
    moved: Callable[[torch.Tensor], float]  # the cotangent-weighted output with the input moved by a tensor


def rate(moved: Callable[[torch.Tensor], float], direction: torch.Tensor) -> float:
    """How fast the student's own output changes along `direction`: a central difference."""
    return (moved(STEP * direction) - moved(-STEP * direction)) / (2 * STEP)


def _far(given: float, measured: float) -> bool:
    return abs(given - measured) > TOLERANCE * max(1.0, abs(measured))


def judge(function: str, inputs: Sequence[Judged], context: str) -> None:
    """Fail when a gradient is not the derivative of the student's own output along its direction."""
    for number, judged in enumerate(inputs):
        given = 0.0 if judged.gradient is None else float((judged.gradient * judged.direction).sum())
        measured = rate(judged.moved, judged.direction)
        if number == 0 and (judged.gradient is None or not judged.gradient.abs().sum()):
            fail(f"{function}: no gradient reaches {judged.name} ({context}): the output must be computed from it.")
        if judged.gradient is None and _far(0.0, measured):
            fail(
                f"{function}: no gradient reaches {judged.name}, though your output depends on it ({context}).\n"
                f"  Is it detached (.detach(), .data, .item(), numpy) on the way?\n  {LESSON}"
            )
        if _far(given, measured):
            fail(
                f"{function}: the gradient reaching {judged.name} is not the derivative of your own output: along a "
                f"random direction your output changes at rate {measured:.4f}, the gradient says {given:.4f} "
                f"({context}).\n  Something cuts the graph on the way (.detach(), .data, .item(), numpy, an in-place "
                f"write).\n  {LESSON}"
            )

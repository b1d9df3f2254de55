"""Gradients judged apart from values: each one against the derivative of the student's own output.

A gradient item passes when autograd's gradient, along a random direction, equals the rate at which
the student's own output changes along it (a central difference), for every input. So a mistake in
the values (a missing transpose, a bias left out) keeps the gradient item, and a graph cut in the
loop (`.detach()`, `.data`, `.item()`, numpy) loses it. An output that gets no gradient to its first
input (x) at all has nothing to judge, and fails. Each gradient is made sure of first (a tensor of its
input's shape and dtype, holding finite values): only then is it multiplied by the direction.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from autograder.checks.compare import describe_type, expect_tensor, fail
from autograder.checks.inputs import normal

STEP = 2e-3  # the central difference's step along a direction of unit-variance entries (float32 inputs)
TOLERANCE = 2e-2  # relative (and absolute, below 1) gap allowed between the two rates; the reference's is < 2e-3
LESSON = 'Reread: Day 2, "Why the gradient dies" (backpropagating through t steps multiplies t derivatives).'


@dataclass(frozen=True)
class Judged:
    """One input the gradient is judged for: its name, the student's gradient, and their output moved."""

    name: str
    gradient: Any  # as it came back: None (no gradient), a tensor, or anything a changed runtime sent
    direction: torch.Tensor
    moved: Callable[[torch.Tensor], float]  # the cotangent-weighted output with the input moved by a tensor


def rate(moved: Callable[[torch.Tensor], float], direction: torch.Tensor) -> float:
    """How fast the student's own output changes along `direction`: a central difference."""
    return (moved(STEP * direction) - moved(-STEP * direction)) / (2 * STEP)


def _far(given: float, measured: float) -> bool:
    return abs(given - measured) > TOLERANCE * max(1.0, abs(measured))


def returned(grads: Any, count: int, function: str) -> list[Any]:
    """The gradients a call gave back (one per input asked about), if they are a list of `count`."""
    if type(grads) is not list or len(grads) != count:
        fail(f"{function}: its gradients came back as {describe_type(grads)}; expected a list of {count}.")
    return grads


def judged_inputs(
    run: Callable[[list], tuple], args: list, wrt: dict[int, str], grads: list, cotangents: list, seed: int
) -> list[Judged]:
    """Each input of `wrt` with the student's gradient, a direction, and `run` (the student's outputs) moved by it."""
    judged = []
    for number, ((index, name), grad) in enumerate(zip(wrt.items(), grads, strict=True)):
        direction = normal(*args[index].shape, seed=seed + 900 + number)

        def moved(step: torch.Tensor, index: int = index) -> float:
            return _weighted(run([a + step if i == index else a for i, a in enumerate(args)]), cotangents)

        judged.append(Judged(name, grad, direction, moved))
    return judged


def _weighted(outputs, cotangents: list[torch.Tensor]) -> float:
    return float(sum((o * c).sum() for o, c in zip(outputs, cotangents, strict=True)))


def judge(function: str, inputs: Sequence[Judged], context: str) -> None:
    """Fail when a gradient is not the derivative of the student's own output along its direction."""
    for number, judged in enumerate(inputs):
        gradient = judged.gradient
        if gradient is not None:  # its shape and dtype before the product: a broadcast would be the grader's cost
            what = f"{function}: the gradient reaching {judged.name}"
            gradient = expect_tensor(gradient, what, judged.direction.shape, judged.direction.dtype)
        given = 0.0 if gradient is None else float((gradient * judged.direction).sum())
        measured = rate(judged.moved, judged.direction)
        if number == 0 and (gradient is None or not gradient.abs().sum()):
            fail(f"{function}: no gradient reaches {judged.name} ({context}): the output must be computed from it.")
        if gradient is None and _far(0.0, measured):
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

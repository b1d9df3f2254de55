"""Calling the student's function on a case: what it returned or raised, named when a known mistake gives the same.

A known mistake names an error only by raising the very same ("Type: first line") on the same inputs; a result
only by being the same result (`same`: an error, a tensor, or a pair of them). The variants run on copies of the
case's arguments (`copied`), so that one that writes into its inputs (L3) leaves the case's own alone.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from autograder.checks import variants
from autograder.checks.compare import ATOL, RTOL, CheckFailure, Suspects, explaining, fail, with_diagnosis
from autograder.student import Raised


@dataclass(frozen=True)
class Error:
    """An error a call raised, "Type: first line": a known mistake names it only by raising the very same."""

    text: str


def error_text(kind: str, message: str) -> str:
    return f"{kind}: {(message.splitlines() or [''])[0]}"


def said(error: Raised) -> str:
    """The student's error as a variant's is known (`Suspects.raising`): "Type: first line"."""
    return error_text(error.error_type, error.error_message)


def first_line(error: Raised) -> str:
    """The first line of the student's error message."""
    return (error.error_message.splitlines() or [""])[0]


def outcomes(table: variants.Table, args: list) -> Suspects:
    """The known mistakes of a function on `args`: what each returns, or the error it raises, as an `Error` (so that
    a student's error is named only by a mistake that raises the very same)."""

    def run(variant: Callable[..., Any]) -> Any:
        try:
            return variant(*copied(args))
        except Exception as error:
            return Error(error_text(type(error).__name__, str(error)))

    return Suspects(table, run)


def part(index: int) -> Callable[[Any], Any]:
    """One part of a pair a variant returned; the error itself when it raised."""
    return lambda outcome: outcome if isinstance(outcome, Error) else outcome[index]


def same(got: Any, known: Any) -> bool:
    """Whether the student's result (an error, a tensor or a pair of them) is what a known mistake gives."""
    if isinstance(got, Error):
        return got == known
    if type(got) in (tuple, list):
        return type(known) in (tuple, list) and len(got) == len(known) and all(map(same, got, known))
    return (
        type(got) is torch.Tensor
        and type(known) is torch.Tensor
        and got.is_floating_point()
        and (got.dtype, got.shape) == (known.dtype, known.shape)  # made sure of before any arithmetic
        and bool(torch.allclose(got, known, atol=ATOL, rtol=RTOL))
    )


def explained(table: variants.Table, got: Any, args: list) -> str | None:
    """The known mistake (or combination) that gives the student's result on `args`."""
    return explaining([(got, outcomes(table, args))], same)


def called(student, target: str, table: variants.Table, args: list, context: str, **options):
    """The call; an error it raises fails the item, named when a known mistake raises the same on these inputs
    (an error no known mistake raises goes on as it came: the grading reports it)."""
    try:
        return student.run(target, *args, **options)
    except Raised as error:
        key = explained(table, Error(said(error)), args)
        if key is None:
            raise
        fail(with_diagnosis(key, f"{target.split('.')[-1]} raised {raise_report(error, context)}"))


def grad_call(student, target: str, table: variants.Table, args: list, context: str, grad: tuple[list, list]):
    """The call asking for the gradients `grad` (the inputs, the cotangents); a gradient it cannot give fails."""
    try:
        return called(student, target, table, args, context, grad=grad)
    except Raised as error:
        if error.error_type == "ValueError" and "gradient" in error.error_message:
            fail(f"{target.split('.')[-1]}: {error.error_message}.")
        raise


def attempt(student, target: str, args: list) -> tuple[Any, Any]:
    """(what the call returned, the call), or (the error it raised as an `Error`, the error)."""
    try:
        call = student.run(target, *args)
    except Raised as error:
        return Error(said(error)), error
    return call.value, call


def raise_report(error: Raised, context: str) -> str:
    """The error as the grading tells it ("Type: message", the student's line, what it means), without its
    "function raised" and with the input it was raised on."""
    first, _, rest = str(error).partition("\n")
    text = (first.partition(" raised ")[2] or said(error)).rstrip(".")
    text += f" ({context})." if context else "."
    return f"{text}\n{rest}" if rest else text


def raised(failure: CheckFailure | None) -> None:
    if failure is not None:
        raise failure


def copied(args: list) -> list:
    """The arguments as new tensors: a variant that writes into its inputs (L3) leaves the case's own alone."""
    return [tuple(a.clone() for a in arg) if type(arg) is tuple else _clone(arg) for arg in args]


def _clone(arg):
    return arg.clone() if isinstance(arg, torch.Tensor) else arg

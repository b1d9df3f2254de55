"""Legal inputs cut from an ordinary input at the edges of a contract, judged against the student's own results there.

An edge (a batch of one row, a sequence of one step, a size of 1, float64) is cut from an ordinary input (`Edge.cut`):
what the student's own function gives on the ordinary input, cut the same way (`Edge.kept`), is what it must give on
the edge. So a mistake of the values costs the other items, not the legal inputs: an edge whose result a known mistake
that is not about the domain gives is passed over (the item that mistake fails names it).
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from autograder.checks import calls, catalogue, variants
from autograder.checks.compare import (
    CheckFailure,
    expect_pair,
    expect_tensor,
    fail,
    mismatch_report,
    unexplained_ordinary,
    with_diagnosis,
)
from autograder.student import Raised

SIZE_OF_ONE = "a size of 1 is a size like any other: every axis stays"  # what a docstring says of any size
UNLIKE_ITS_OWN = "Here your function's results differ from its own on the same numbers inside an ordinary input:"


@dataclass(frozen=True)
class Edge:
    """A legal input cut from an ordinary one (`cut`, on the ordinary input's arguments): what the student's own
    function gives on the ordinary input, cut the same way (`kept`, on its results), is what it must give here."""

    what: str  # the legal input, in words
    rule: str  # what the docstring says of it
    cut: Callable[[list], list]
    kept: Callable[[tuple], tuple]


@dataclass(frozen=True)
class Legal:
    """One function's legal domain, as its legal_inputs item judges it."""

    target: str
    table: variants.Table
    reference: Callable[..., Any]
    names: tuple[str, str]  # the parts of the pair it returns
    describe: Callable[[list], str]  # an input's shapes, in words
    domain: frozenset[str]  # the catalogue's mistakes about the domain itself (R8): named here, never passed over


def float64(args: list) -> list:
    """The arguments in float64 (a pair's tensors too)."""
    return [tuple(a.double() for a in arg) if type(arg) is tuple else _double(arg) for arg in args]


def _double(arg):
    return arg.double() if isinstance(arg, torch.Tensor) else arg


def same_results(results: tuple) -> tuple:
    return results


def judge_legal(student, legal: Legal, edges: list[tuple[list, Edge]]) -> None:
    """Each edge against the student's own results on the ordinary input it is cut from. An edge whose result a
    known mistake that is not about the domain gives is passed over: the item that mistake fails names it."""
    own: dict[int, tuple] = {}  # the student's results on each ordinary input, asked for once
    for ordinary, edge in edges:
        if id(ordinary) not in own:
            own[id(ordinary)] = _own_results(student, legal, ordinary)
        kept = edge.kept(own[id(ordinary)])
        args = calls.copied(edge.cut(ordinary))
        value, call = calls.attempt(student, legal.target, args)
        if isinstance(call, Raised):
            problem = f"It raised {calls.raise_report(call, '')}"
        else:
            problem = _edge_problem(legal, value, kept, args)
        if problem is None:
            continue
        key = calls.explained(legal.table, value, args)
        if key is not None and not set(catalogue.ids(key)) & legal.domain:
            continue
        fail(with_diagnosis(key, f"This input is legal: {edge.what} ({legal.describe(args)}): {edge.rule}.\n{problem}"))


def _own_results(student, legal: Legal, args: list) -> tuple[torch.Tensor, torch.Tensor]:
    """The student's results on an ordinary input, made sure of: the edges are judged against them."""
    function = legal.target.split(".")[-1]
    call = calls.called(student, legal.target, legal.table, args, legal.describe(args))
    expected = legal.reference(*calls.copied(args))
    try:
        pair = expect_pair(call.value, function, legal.names)
        results = tuple(map(expect_tensor, pair, legal.names, (part.shape for part in expected)))
    except CheckFailure as failure:
        report = f"{str(failure).rstrip('.')} ({legal.describe(args)})."
        fail(with_diagnosis(calls.explained(legal.table, call.value, args), report))
    if not calls.same(results, tuple(expected)) and calls.explained(legal.table, results, args) is None:
        fail(unexplained_ordinary(function, legal.describe(args)))
    return results


def _edge_problem(legal: Legal, value: Any, kept: tuple, args: list) -> str | None:
    """What is wrong with the student's result on an edge (not an error), against its own results cut the same
    way."""
    function, context = legal.target.split(".")[-1], legal.describe(args)
    try:
        pair = expect_pair(value, function, legal.names)
        named = zip(pair, legal.names, kept, strict=True)
        parts = [expect_tensor(part, name, own.shape, args[0].dtype) for part, name, own in named]
    except CheckFailure as failure:
        return str(failure)
    for part, name, own in zip(parts, legal.names, kept, strict=True):
        report = mismatch_report(name, part, own.to(part.dtype), 1 if part.dim() == 3 else None, context)
        if report is not None:
            return f"{UNLIKE_ITS_OWN}\n{report}"
    return None

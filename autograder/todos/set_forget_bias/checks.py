"""The checks of set_forget_bias's items: its LSTMs, and one check_set_forget_bias_<aspect> per item of its record.

`forget_block` compares what the gates see with the reference on one-layer LSTMs. The other two
items judge their aspect on the student's own results: `all_layers_and_directions` that every layer
and direction of a stacked bidirectional LSTM gets what a one-layer LSTM holding the same biases
gets, `in_place` that the same module comes back holding the same Parameter objects, written into.
Those three use positive values only; `legal_inputs` alone judges the edges of the legal domain (a
value of 0 or below, a hidden size of 1), so code that refuses them loses that item and no other.

A write into a bias with autograd on raises (the biases are leaves that require grad): each item then
shows that error, explained (checks/errors.py), and judges the call made again with autograd off, naming
the mistakes of the parts that run there; the item is lost all the same, since the function as written
sets nothing.
"""

import copy
import functools
from dataclasses import dataclass

import torch
from torch import nn

from autograder.checks import variants
from autograder.checks.compare import (
    CheckFailure,
    Suspects,
    explaining,
    fail,
    refused_legal_input,
    with_diagnosis,
)
from autograder.checks.inputs import seeded_module
from autograder.student import Raised, StudentError
from solutions import initialisation as reference

GATES = ("input", "forget", "cell", "output")


@dataclass(frozen=True)
class Spec:
    """An nn.LSTM to set and the value to set it to (None: the function's default)."""

    size: tuple[int, int]  # input, hidden
    options: dict
    value: float | None

    @property
    def extra(self) -> tuple[float, ...]:
        return () if self.value is None else (self.value,)

    @property
    def shown(self) -> str:
        layers = "".join(f", {key}={option}" for key, option in self.options.items())
        value = self.value if self.value is not None else "default (1.0)"
        return f"nn.LSTM({self.size[0]}, {self.size[1]}{layers}), value {value}"


SINGLE = [Spec((3, 4), {}, 1.0), Spec((2, 5), {}, 2.5), Spec((4, 3), {}, None)]
STACKED = [Spec((3, 4), {"num_layers": 2, "bidirectional": True}, 1.0), Spec((2, 3), {"num_layers": 3}, 0.75)]
# the edges of the legal domain, each with why the docstring allows it: judged by `legal_inputs` alone
LEGAL = [
    (Spec((3, 4), {}, 0.0), "any value is, and 0 starts the forget gate at 0.5"),
    (Spec((2, 3), {"num_layers": 3}, -0.5), "any value is, and a negative one starts the forget gate below 0.5"),
    (Spec((2, 1), {"num_layers": 2, "bidirectional": True}, -2.0), "any nn.LSTM is, a hidden size of 1 too"),
]
LEGAL_SEED = 100  # the legal inputs' LSTMs are seeded apart from the other items'
# what PyTorch says of a write into a Parameter (or a slice of it) while autograd records (checks/errors.py
# explains it in the failure's text)
LEAF_WRITE = "leaf Variable that requires grad is being used in an in-place operation"


@dataclass(frozen=True)
class Run:
    """One call of the student's set_forget_bias: the LSTM before, after, and what the call returned."""

    spec: Spec
    original: nn.LSTM
    lstm: nn.LSTM
    call: object

    @property
    def hidden(self) -> int:
        return self.lstm.hidden_size


def _effective(lstm: nn.LSTM) -> dict[str, torch.Tensor]:
    """What the gates see: bias_ih + bias_hh per layer and direction, and every weight."""
    state = lstm.state_dict()
    seen = {name: value for name, value in state.items() if name.startswith("weight")}
    for name in state:
        if name.startswith("bias_ih"):
            seen[name.replace("bias_ih", "bias")] = state[name] + state[name.replace("bias_ih", "bias_hh")]
    return seen


def _run(student, spec: Spec, seed: int, lstm: nn.LSTM | None = None) -> Run:
    lstm = seeded_module(nn.LSTM, *spec.size, batch_first=True, seed=seed, **spec.options) if lstm is None else lstm
    original = copy.deepcopy(lstm)
    call = student.run("initialisation.set_forget_bias", lstm, *spec.extra)
    return Run(spec, original, lstm, call)


def _blocks(effective: dict[str, torch.Tensor], hidden: int) -> dict[tuple[str, int], torch.Tensor]:
    """Each bias's four gate blocks, and each weight whole (block 0)."""
    blocks = {}
    for name, value in effective.items():
        parts = value.split(hidden) if name.startswith("bias") else (value,)
        blocks.update({(name, number): part for number, part in enumerate(parts)})
    return blocks


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return bool(torch.allclose(a, b, atol=1e-6, rtol=0))


def _first_difference(got: dict, expected: dict, hidden: int, skip=frozenset()) -> str | None:
    for (name, block), value in _blocks(expected, hidden).items():
        mine = _blocks(got, hidden)[name, block]
        if (name, block) in skip or _same(mine, value):
            continue
        if name.startswith("weight"):
            return f"{name} changed; only the biases should"
        entry = block * hidden + int((~torch.isclose(mine, value, atol=1e-6, rtol=0)).nonzero()[0])
        real = name.replace("bias", "bias_ih") + " + " + name.replace("bias", "bias_hh")
        return (
            f"the {GATES[block]} gate's effective bias ({real}) at entry {entry} is "
            f"{float(got[name][entry]):.4f}; expected {float(value[entry - block * hidden]):.4f}"
        )
    return None


def _matches(got: dict, variant) -> bool:
    return variant is not None and all(_same(got[name], value) for name, value in variant.items())


def _suspects(run: Run) -> Suspects:
    table = variants.of("set_forget_bias")
    return Suspects(table, lambda v, r=run: _effective(v(copy.deepcopy(r.original), *r.spec.extra)))


def _explains_its_blocks(runs: list[Run], key: str) -> set | None:
    """The blocks a mistake touches, if the student's results equal its variant's on all of them (else None)."""
    touched_everywhere = []
    for run in runs:
        variant = _suspects(run).output(key)
        if variant is None:
            return None
        before, mine = _blocks(_effective(run.original), run.hidden), _blocks(_effective(run.lstm), run.hidden)
        touched = {block for block, value in _blocks(variant, run.hidden).items() if not _same(value, before[block])}
        if not touched or not all(_same(mine[block], _blocks(variant, run.hidden)[block]) for block in touched):
            return None
        touched_everywhere.append(touched)
    return set.union(*touched_everywhere)


def _diagnose(runs: list[Run]) -> tuple[str | None, frozenset]:
    """The mistake (or pair) that explains every run; else one that explains the blocks it touches, and those."""
    key = explaining([(_effective(run.lstm), _suspects(run)) for run in runs], _matches)
    if key is not None:
        return key, frozenset()
    for key in variants.of("set_forget_bias"):
        touched = _explains_its_blocks(runs, key)
        if touched:
            return key, frozenset(touched)
    return None, frozenset()


def _check_values(student, cases: list[Spec]) -> None:
    runs = [_run(student, spec, seed) for seed, spec in enumerate(cases)]
    for run in runs:
        expected = _effective(reference.set_forget_bias(copy.deepcopy(run.original), *run.spec.extra))
        problem = _first_difference(_effective(run.lstm), expected, run.hidden)
        if problem is None:
            continue
        mistake, explained = _diagnose(runs)
        other = _first_difference(_effective(run.lstm), expected, run.hidden, explained) if explained else None
        if explained and other is None:  # this run differs only where the mistake explains: show another's
            other = next(
                (found for r in runs if (found := _differs_elsewhere(r, explained)) is not None), "nothing else"
            )
        report = f"set_forget_bias: {problem} ({run.spec.shown})."
        if explained:
            report = f"set_forget_bias: besides that, {other} ({run.spec.shown})."
        fail(with_diagnosis(mistake, report))


def _differs_elsewhere(run: Run, explained: frozenset) -> str | None:
    expected = _effective(reference.set_forget_bias(copy.deepcopy(run.original), *run.spec.extra))
    return _first_difference(_effective(run.lstm), expected, run.hidden, explained)


@dataclass(frozen=True)
class AutogradOff:
    """The student's calls made with autograd off, as if `with torch.no_grad():` were around them."""

    student: object

    def run(self, target: str, *args, **kwargs):
        return self.student.run(target, *args, autograd=False, **kwargs)


def _judged(check):
    """`check` of the student's set_forget_bias; when a write into a bias raised as autograd recorded it, the item
    fails saying what that means and what the same check finds with autograd off (the mistakes named there)."""

    @functools.wraps(check)
    def judged(student) -> None:
        try:
            check(student)
        except Raised as error:
            if LEAF_WRITE not in error.error_message:
                raise
            fail(f"{error}\n{_without_autograd(check, student)}")

    return judged


def _without_autograd(check, student) -> str:
    try:
        check(AutogradOff(student))
    except (CheckFailure, StudentError) as failure:
        return f"Run again with autograd off, your function shows more:\n{failure}"
    return "Run again with autograd off, your function does what this item asks: that write is all that is wrong."


@_judged
def check_set_forget_bias_forget_block(student) -> None:
    """The forget gate's effective bias becomes the value; nothing else changes."""
    _check_values(student, SINGLE)


def _pairs(lstm: nn.LSTM) -> list[tuple[str, str]]:
    """(bias_ih name, bias_hh name) of every layer and direction."""
    return [(name, name.replace("bias_ih", "bias_hh")) for name, _ in lstm.named_parameters() if "bias_ih" in name]


def _untouched(run: Run) -> list[str]:
    before, after = run.original.state_dict(), run.lstm.state_dict()
    return [ih for ih, hh in _pairs(run.lstm) if all(torch.equal(before[name], after[name]) for name in (ih, hh))]


def _alone(student, run: Run, ih: str, hh: str, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """What set_forget_bias writes into a one-layer LSTM holding the biases that layer and direction held."""
    single = seeded_module(nn.LSTM, run.spec.size[0], run.hidden, batch_first=True, seed=seed + 50)
    before = run.original.state_dict()
    with torch.no_grad():
        single.bias_ih_l0.copy_(before[ih])
        single.bias_hh_l0.copy_(before[hh])
    alone = _run(student, Spec(run.spec.size, {}, run.spec.value), seed, single)
    return alone.lstm.bias_ih_l0.detach(), alone.lstm.bias_hh_l0.detach()


@_judged
def check_set_forget_bias_all_layers_and_directions(student) -> None:
    """Every layer and both directions of a stacked bidirectional LSTM are set: each gets what a one-layer
    LSTM holding the same biases gets (judged on the student's own results, whatever their values)."""
    for seed, spec in enumerate(STACKED):
        run = _run(student, spec, seed)
        untouched = _untouched(run)
        if len(untouched) == len(_pairs(run.lstm)):
            fail(f"set_forget_bias changed no bias of the LSTM ({spec.shown}).")
        if untouched:
            shown = ", ".join(name.replace("bias_ih_", "") for name in untouched)
            report = f"set_forget_bias left the biases of {shown} as they were ({spec.shown})."
            fail(with_diagnosis("F3", report))
        after = run.lstm.state_dict()
        for ih, hh in _pairs(run.lstm):
            alone = _alone(student, run, ih, hh, seed)
            if not (_same(after[ih], alone[0]) and _same(after[hh], alone[1])):
                fail(
                    f"set_forget_bias writes into {ih} and {hh} something else than into the biases of a one-layer "
                    f"LSTM that holds the same values ({spec.shown}): every layer and direction is set alike."
                )


@_judged
def check_set_forget_bias_in_place(student) -> None:
    """The forget bias is set in place: the same module comes back, holding the same Parameter objects,
    with something written into its biases (whatever the values)."""
    for seed, spec in enumerate(STACKED):
        run = _run(student, spec, seed)
        if not run.call.effects[0].same_parameters:
            fail(with_diagnosis("F4", "set_forget_bias: after the call the LSTM holds new bias Parameters."))
        if run.call.value is not run.lstm:
            fail("set_forget_bias must return the very LSTM it was given (end with `return lstm`).")
        if len(_untouched(run)) == len(_pairs(run.lstm)):
            fail(f"set_forget_bias wrote nothing into the LSTM's biases ({spec.shown}): write into them in place.")


def _difference(run: Run) -> str | None:
    """Where the student's results first differ from the reference's on the run's input, or None."""
    expected = _effective(reference.set_forget_bias(copy.deepcopy(run.original), *run.spec.extra))
    return _first_difference(_effective(run.lstm), expected, run.hidden)


@_judged
def check_set_forget_bias_legal_inputs(student) -> None:
    """The edges of the legal domain (a value of 0 or below, a hidden size of 1) are handled as any input: the
    reference's results there, or a known mistake's (the other items grade those); refusing them costs this item."""
    for seed, (spec, why) in enumerate(LEGAL, start=LEGAL_SEED):
        try:
            run = _run(student, spec, seed)
        except Raised as error:
            if LEAF_WRITE in error.error_message:
                raise
            fail(refused_legal_input(error, spec.shown, why))
        problem = _difference(run)
        if problem is not None and explaining([(_effective(run.lstm), _suspects(run))], _matches) is None:
            fail(f"set_forget_bias, on a legal input: {problem} ({spec.shown}).\nThat input is legal: {why}.")

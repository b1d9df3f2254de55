"""Correct pooling helpers that stand in for the student's own, so that an item judges only its own TODO.

When the classifier fails and the student's `gather_final` or `masked_mean` (TODOs 4 and 5) fails its own
item too, the grader runs the classifier's item again with these in the student's functions' place
(`standing_in`): the classifier keeps what its own code earns. They are TODOs 4 and 5's answers, by the
grader's own code, so they stay out of the student repository (like forget_gate.py).
"""

import contextlib
import sys
from collections.abc import Callable, Iterator
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


@contextlib.contextmanager
def standing_in(names: list[str], resolve: Callable[[str], Any]) -> Iterator[None]:
    """Inside the block, every name of the student's package bound to one of the named functions (the module's
    own, and any `from ... import` of it) is bound to its stand-in instead."""
    own = {name: _resolved(resolve, name) for name in names if name in STANDINS}
    originals = {id(value): STANDINS[name] for name, value in own.items() if value is not None}
    packages = {str(getattr(value, "__module__", "")).split(".")[0] for value in own.values() if value is not None}
    replaced: list[tuple[Any, str, Any]] = []
    for module_name, module in list(sys.modules.items()) if originals else []:
        if module_name.split(".")[0] in packages and module is not None:
            for attribute, value in list(vars(module).items()):
                if id(value) in originals:
                    replaced.append((module, attribute, value))
                    setattr(module, attribute, originals[id(value)])
    try:
        yield
    finally:
        for module, attribute, value in reversed(replaced):
            setattr(module, attribute, value)


def _resolved(resolve: Callable[[str], Any], name: str) -> Any:
    """The student's function, or None when there is none to replace (not written, or not importable)."""
    try:
        return resolve(name)
    except Exception:
        return None

"""Seeds decided early: when the seeds already trained decide every median an item's verdict reads,
the other seeds are not needed (issue 34; docs/early-stopping.md, "Seeds decided early").

A median over `count` seeds is at least a bound as soon as `count // 2 + 1` of them are: its middle
value (or, for an even count, both middle values) is among them, whatever the others are. Likewise it
is below the bound as soon as that many are below. So the verdict on the seeds trained so far is the
verdict on all of them, and no verdict differs from training every seed; pure functions, no training.
"""

from collections.abc import Callable, Sequence
from typing import Any


def needed(count: int) -> int:
    """How many seeds on one side of a bound decide the median over `count` seeds."""
    return count // 2 + 1


def side(values: Sequence[float | None], count: int, holds: Callable[[float], bool]) -> bool | None:
    """Whether the median over `count` seeds holds the condition, as far as the known `values` (None: a
    seed not trained) decide it: True or False once they do, None while they do not."""
    known = [value for value in values if value is not None]
    holding = sum(1 for value in known if holds(value))
    if holding >= needed(count):
        return True
    if len(known) - holding >= needed(count):
        return False
    return None


def sides(settings: dict[str, Any], found: Sequence[Any], count: int) -> list[bool | None]:
    """Each median the verdict reads (checks/thresholds.py shortfall), decided or not by the measures
    `found` of the seeds trained: what was learned against the threshold and, where the recipe has
    `chance_at_most`, the model before training and with its recurrent layer reset against it."""
    threshold, chance = settings["threshold"], settings.get("chance_at_most")
    decided = [side([m.learned for m in found], count, lambda value: value >= threshold)]
    if chance is not None:
        for values in ([m.before for m in found], [m.reset for m in found]):
            decided.append(side(values, count, lambda value: value <= chance))
    return decided


def verdict_decided(settings: dict[str, Any], found: Sequence[Any], count: int) -> bool:
    """Whether the seeds measured decide every median the verdict reads: then the rest are not needed
    (and the feedback names the same reason as with every seed)."""
    return None not in sides(settings, found, count)


def still_training(cleared: int, short: int, count: int) -> int:
    """How many seeds to train at once while the learned median is undecided: `cleared` seeds ended at or
    above the threshold, `short` ones below it. Exactly as many as could still decide it, never a seed whose
    training might not be needed (0 once it is decided)."""
    return max(0, needed(count) - max(cleared, short))

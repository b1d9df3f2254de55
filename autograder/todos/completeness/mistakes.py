"""The mistakes finding of `autograde todo check`: each mistake the catalogue gives a function has a variant, and
each variant, standing in for the function in the reference, loses an item whose feedback names its mistake."""

import importlib
import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from autograder import rubric
from autograder.todos import Record
from autograder.todos.completeness.findings import CHECKOUT, REFERENCE, Finding, Paths, Requirement, Status
from autograder.todos.completeness.in_process import check_home, lost_item, reference
from autograder.todos.completeness.words import counted, shown


def mistakes_of(found: Record) -> list[str]:
    """The ids of the catalogue's mistakes made in this function (its own and those it shares, `also`)."""
    from autograder.checks.catalogue import CATALOGUE

    names = {found.key, found.function}
    return [mistake.id for mistake in CATALOGUE.values() if names & set(mistake.functions)]


def table_of(found: Record) -> Any:
    """The function's variants (a `variants.Table`), or None."""
    from autograder.checks.variants import BY_FUNCTION

    return BY_FUNCTION.get(found.function, BY_FUNCTION.get(found.key))


def mistake_findings(
    found: Record, loaded: rubric.Rubric | rubric.RubricError, paths: Paths = CHECKOUT
) -> list[Finding]:
    """Each catalogued mistake has a variant, each variant a catalogued mistake, and each variant standing in for
    the function in the reference loses an item that names it."""
    mistakes, table = mistakes_of(found), table_of(found) or {}
    ids = {key: key.partition(":")[0] for key in table}
    missing = [_no_variant(found, mistake, paths) for mistake in mistakes if mistake not in ids.values()]
    missing += [
        f'variant {key} is of {ids[key]}, a mistake the catalogue does not give {found.key}: add "{ids[key]}" to '
        f"`also` in its record.toml, or remove the variant"
        for key in table
        if ids[key] not in mistakes
    ]
    if isinstance(loaded, rubric.RubricError):
        missing += ["its variants were not run: the rubric does not load (above)"] if table else []
    else:
        run = [key for key in table if ids[key] in mistakes]
        missing += [words for key in run if (words := _unnamed(found, key, table[key], loaded))]
    if missing:
        return [Finding(Requirement.MISTAKES, Status.MISSING, words) for words in missing]
    if not mistakes:
        return [
            Finding(Requirement.MISTAKES, Status.NOTE, "the catalogue gives it no mistake: its feedback names none")
        ]
    return [
        Finding(
            Requirement.MISTAKES,
            Status.OK,
            f"each of its mistakes ({', '.join(mistakes)}) has a variant, and each of its "
            f"{counted(len(table), 'variant')} loses an item whose feedback names it",
        )
    ]


def _no_variant(found: Record, mistake: str, paths: Paths) -> str:
    from autograder.checks.catalogue import CATALOGUE

    owner = CATALOGUE[mistake].function
    shared = "" if owner in (found.key, found.function) else f" ({owner}'s, which the catalogue says is made here too)"
    return f"mistake {mistake}{shared} has no variant: add it to {_table_home(found, paths)}'s table"


def standing_in(found: Record, variant: Callable[..., Any]) -> Any:
    """The reference with the exercise's function replaced by `variant` (a method: in a subclass of its class)."""
    owner, _, method = found.function.rpartition(".")
    replaced = {found.target: variant}
    if owner:
        original = getattr(importlib.import_module(f"{REFERENCE}.{found.module}"), owner)
        replaced[f"{found.module}.{owner}"] = type(owner, (original,), {method: variant})
    return reference(replaced)


def _unnamed(found: Record, key: str, variant: Callable[..., Any], loaded: rubric.Rubric) -> str:
    """What is wrong when no item the variant loses names its mistake ("" when one does: the first is enough)."""
    mistake, student, lost = key.partition(":")[0], standing_in(found, variant), []
    for aspect in (aspect for aspect in found.points if aspect not in found.thresholds):  # training ones: calibrate
        feedback = lost_item(found, aspect, student, loaded)
        if re.search(rf"^\[{re.escape(mistake)}\] ", feedback, re.MULTILINE):
            return ""
        lost += [aspect] if feedback else []
    if not lost:
        return f"variant {key} loses no item: the checks cannot tell it from the reference (fix it, or add an item)"
    homes = ", ".join(dict.fromkeys(check_home(found, aspect) for aspect in lost))  # where todos.check finds them
    return (
        f"variant {key} loses {', '.join(lost)}, but no feedback names [{mistake}]: make a check of those items "
        f"recognise it ({homes})"
    )


def _table_home(found: Record, paths: Paths) -> str:
    """Where the exercise's variants are written: beside its other variants, else where the other exercises' are."""
    table = table_of(found)
    try:
        return shown(Path(inspect.getsourcefile(table.implementation)))
    except (AttributeError, TypeError):  # no table yet, or one whose source cannot be found
        pass
    homes = sorted(paths.todos.glob("*/variants.py"))
    if homes:
        return shown(paths.todos / found.key / homes[0].name)
    from autograder.checks import variants

    return shown(Path(variants.__file__))

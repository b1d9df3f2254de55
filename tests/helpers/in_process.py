"""Checks run in process on the reference with some functions rewritten: what the exercises' checks tests share."""

import re

import pytest

from autograder import todos
from autograder.checks.compare import CheckFailure
from autograder.student import InProcess, StudentError
from solutions import baseline, classifier, language_model, padding

REFERENCES = {"padding.": padding, "classifier.": classifier, "language_model.": language_model, "baseline.": baseline}


def student(**functions) -> InProcess:
    """The reference's functions, with `functions` ("padding__encode_packed": f) in their place."""
    replaced = {name.replace("__", "."): function for name, function in functions.items()}

    def resolve(dotted: str):
        if dotted in replaced:
            return replaced[dotted]
        module = next(module for prefix, module in REFERENCES.items() if dotted.startswith(prefix))
        return getattr(module, dotted.split(".", 1)[1])

    return InProcess(resolve)


def feedback(check, submission: InProcess) -> str:
    """The feedback of `check`, which must fail on `submission`."""
    with pytest.raises(CheckFailure) as failure:
        check(submission)
    return str(failure.value)


def named(feedback: str) -> list[str]:
    """The catalogue ids a feedback names, a line each ("[F3] ...")."""
    return re.findall(r"^\[([A-Z]\d)\] ", feedback, re.MULTILINE)


def lost_items(key: str, aspects: tuple[str, ...], submission: InProcess) -> dict[str, str]:
    """Aspect -> feedback, for each of the exercise's items among `aspects` the submission loses."""
    found = {}
    for aspect in aspects:
        try:
            todos.check(key, aspect)(submission)
        except (CheckFailure, StudentError) as failure:
            found[aspect] = str(failure)
    return found

"""Each rubric item grades its own aspect: the items every known mistake loses, and why it loses each.

Every variant of each exercise (autograder/todos/<key>/variants.py: a mistake of the catalogue, in each of its
forms) stands in for its function in the reference, and every check of that function runs on it in process. The
exercise's variants.py says which items it loses (`COSTS`); each loss is justified by the mistake. A mistake in the
values costs the values items; the aspect items (the loop and the step written by hand, the initial state, the
gradients, skipping the padding, every layer and direction, in place, no grad, the norm reported) keep their points
unless the mistake is in that aspect. The threshold items train a model and are left out here: they truly depend on
the values (the corpus grades them, `autograde calibrate` keeps the known mistakes below them). Every item lost names
the mistake. The tables below are read from the exercises' folders, in the TODOs' order, keyed by the function a TODO
names.
"""

import re

import pytest

from autograder import rubric, todos
from autograder.checks import catalogue, variants
from autograder.checks.compare import CheckFailure
from autograder.student import InProcess, StudentError, in_package
from solutions import classifier as reference_classifier

EXERCISES = [(todos.record(found.key), variants.costs(found.key)) for found in catalogue.exercises()]  # with mistakes
TARGETS = {record.function: record.target for record, _ in EXERCISES}
NAMED = re.compile(r"^\[([A-Z]\d)\] ", re.MULTILINE)

# (function, variant) -> {item aspect: why the mistake loses it}; every other item of the function passes
LOSES = {(record.function, key): why for record, found in EXERCISES for key, why in found.costs.items()}
GRADED = rubric.load()


def student(function: str, variant) -> InProcess:
    """The reference with `function` replaced by `variant` (the classifier's forward in a subclass)."""
    base = in_package("solutions")
    target = TARGETS[function]
    kind = type("SequenceClassifier", (reference_classifier.SequenceClassifier,), {"forward": variant})

    def resolve(dotted: str):
        if dotted == target:
            return variant
        if function == "SequenceClassifier.forward" and dotted == "classifier.SequenceClassifier":
            return kind
        return base(dotted)

    return InProcess(resolve)


def items(function: str) -> list[rubric.Item]:
    graded = function.split(".")[0]
    return [item for item in GRADED.items if item.function == graded and GRADED.recipe(graded, item.aspect) is None]


def lost(function: str, submission: InProcess) -> dict[str, str]:
    """Item aspect -> its feedback, for every item the submission loses."""
    found = {}
    for item in items(function):
        try:
            todos.check(item.function, item.aspect)(submission)
        except (CheckFailure, StudentError) as failure:
            found[item.aspect] = str(failure)
    return found


def test_the_table_holds_every_variant_and_only_items_of_its_function():
    every = {(function, key) for function, table in variants.BY_FUNCTION.items() for key in table}
    assert set(LOSES) == every
    for (function, _), losses in LOSES.items():
        assert losses and set(losses) <= {item.aspect for item in items(function)}


@pytest.mark.parametrize(("function", "key"), list(LOSES), ids=[f"{f}-{k}" for f, k in LOSES])
def test_each_known_mistake_loses_exactly_the_items_it_explains_and_names_itself_on_each(function, key):
    found = lost(function, student(function, variants.BY_FUNCTION[function][key]))
    assert set(found) == set(LOSES[function, key]), {aspect: text.splitlines()[0] for aspect, text in found.items()}
    mistakes = catalogue.ids(key)
    for aspect, feedback in found.items():
        assert NAMED.findall(feedback) == mistakes, f"{aspect} does not name [{key}]:\n{feedback}"


def test_the_reference_loses_no_item():
    for function in TARGETS:
        assert lost(function, InProcess(in_package("solutions"))) == {}, function


# values-only mistakes, and the aspect items of their function they keep (the "Done when")
ASPECTS_KEPT = {(record.function, key): kept for record, found in EXERCISES for key, kept in found.kept.items()}


@pytest.mark.parametrize(("function", "key"), list(ASPECTS_KEPT), ids=[f"{f}-{k}" for f, k in ASPECTS_KEPT])
def test_a_mistake_in_the_values_keeps_the_aspect_items(function, key):
    found = lost(function, student(function, variants.BY_FUNCTION[function][key]))
    assert found, f"{key} loses nothing: it is no mistake"
    assert set(ASPECTS_KEPT[function, key]).isdisjoint(found), sorted(found)


# mistakes made at once in one function: each is named, however many (not only pairs)
AT_ONCE = [(record.function, key) for record, found in EXERCISES for key in found.at_once]


@pytest.mark.parametrize(("function", "key"), AT_ONCE, ids=[f"{f}-{k}" for f, k in AT_ONCE])
def test_every_mistake_of_a_combination_is_named(function, key):
    found = lost(function, student(function, variants.BY_FUNCTION[function][key]))
    assert found, f"{key} loses nothing"
    named = {mistake for feedback in found.values() for mistake in NAMED.findall(feedback)}
    assert named == set(catalogue.ids(key)), {aspect: text.splitlines()[0] for aspect, text in found.items()}

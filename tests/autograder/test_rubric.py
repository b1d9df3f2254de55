"""The rubric file is the single list of items: suites, checks and points agree with it."""

import ast
from pathlib import Path

import pytest

from autograder import checks, rubric, stubs
from autograder.locations import RUBRIC, SUITES


def suite_tests() -> set[tuple[str, str]]:
    found = set()
    for path in SUITES.glob("test_*.py"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                found.add((path.stem, node.name))
    return found


def test_it_adds_up_to_100_points():
    assert rubric.load().total == 100


def test_it_has_a_hidden_test_for_every_item_and_an_item_for_every_test():
    items = {item.test_id for item in rubric.load().items}
    assert items == suite_tests()


def test_it_has_a_check_with_a_docstring_for_every_item():
    modules = {path.stem for path in Path(checks.__file__).parent.glob("*.py")}
    for item in rubric.load().items:
        found = [
            getattr(
                __import__(f"autograder.checks.{module}", fromlist=["x"]), f"check_{item.function}_{item.aspect}", None
            )
            for module in modules
        ]
        check = next((f for f in found if f is not None), None)
        assert check is not None, f"no check_{item.function}_{item.aspect}"
        assert check.__doc__, f"check_{item.function}_{item.aspect} needs a docstring: it is the item's description"


def test_it_grades_every_todo_of_the_week():
    graded = set(rubric.load().functions)
    assert {todo.function.split(".")[0] for todo in stubs.todos()} == graded


def test_it_keeps_the_items_of_the_functions_named_by_only():
    selected = rubric.load().select(["gather_final", "sample"])
    assert {item.function for item in selected.items} == {"gather_final", "sample"}
    points = rubric.load().items
    assert selected.total == sum(item.points for item in points if item.function in {"gather_final", "sample"})


def test_it_refuses_an_unknown_name_in_only_or_in_a_rubric_file_and_lists_the_known_ones(tmp_path):
    with pytest.raises(ValueError, match="no rubric items for gather_finale; known: rnn_forward"):
        rubric.load().select(["gather_finale"])
    text = RUBRIC.read_text()
    (tmp_path / "limit.toml").write_text(text.replace("call_timeout =", "call_timeuot ="))
    with pytest.raises(rubric.RubricError, match=r"limit.toml: unknown limit call_timeuot \(the limits are call_"):
        rubric.load(tmp_path / "limit.toml")
    (tmp_path / "section.toml").write_text(text + "\n[lates]\nper_day = 0.1\n")
    with pytest.raises(rubric.RubricError, match=r"unknown section \[lates\] \(a rubric holds points, thresholds"):
        rubric.load(tmp_path / "section.toml")

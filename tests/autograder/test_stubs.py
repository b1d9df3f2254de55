"""The stub generator: exercises/ is exactly what solutions/ produces, and each stub names its TODO."""

import ast

import pytest
from support import EXERCISES, SOLUTIONS, code_without_docstrings

from autograder import stubs, todos

SAMPLE = '''def double(x):
    """Twice x."""
    # TODO · doubling: multiply by two.
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION
'''


def test_it_keeps_exercises_byte_identical_to_the_generated_stubs():
    assert stubs.differences() == [], "run `autograde stubs` after changing solutions/"


def test_it_replaces_each_region_with_a_not_implemented_error_naming_the_todo():
    stub = stubs.strip_solutions(SAMPLE, first=3)
    assert "return 2 * x" not in stub and "BEGIN SOLUTION" not in stub
    assert '    raise NotImplementedError("TODO 3 · doubling: not implemented yet")\n' in stub
    assert "    # TODO 3 · doubling: multiply by two.\n" in stub


def test_it_refuses_a_todo_number_written_by_hand_saying_the_generator_writes_it():
    with pytest.raises(stubs.MarkerError, match="without a number: the generator numbers the TODOs"):
        stubs.strip_solutions(SAMPLE.replace("# TODO ·", "# TODO 3 ·"))


def test_it_numbers_a_new_todo_beside_its_sibling_and_the_ones_after_it_with_no_file_renumbered_by_hand(tmp_path):
    for path in SOLUTIONS.glob("*.py"):
        (tmp_path / path.name).write_text(path.read_text())
    recurrence = tmp_path / "recurrence.py"
    recurrence.write_text(recurrence.read_text() + "\n\n" + SAMPLE)  # a TODO after the week's first module's last
    found = {todo.function: todo.number for todo in stubs.todos(tmp_path)}
    before = {todo.function: todo.number for todo in stubs.todos()}
    last = max(todo.number for todo in stubs.todos() if todo.module == "recurrence")
    assert found["double"] == last + 1
    assert all(found[f] == n + (n > last) for f, n in before.items())
    packing = f'("TODO {before["encode_packed"] + 1} · packing: not implemented yet")'
    assert packing in stubs.generate(tmp_path)["padding.py"]


def test_it_refuses_todos_in_a_module_the_week_does_not_order(tmp_path):
    (tmp_path / "extra.py").write_text(SAMPLE)
    with pytest.raises(stubs.MarkerError, match=r"extra\.py has TODOs but is not in stubs\.MODULES"):
        stubs.todos(tmp_path)


def test_it_copies_files_without_regions_unchanged():
    assert stubs.generate()["data.py"] == (SOLUTIONS / "data.py").read_text()


def test_it_finds_one_todo_per_record_in_number_order():
    found = stubs.todos()
    assert [todo.number for todo in found] == list(range(1, len(found) + 1))
    assert [(todo.module, todo.function) for todo in found] == [(r.module, r.function) for r in todos.records()]


def test_it_leaves_no_solution_code_in_the_stubs():
    for todo in stubs.todos():
        stub = code_without_docstrings((EXERCISES / f"{todo.module}.py").read_text())
        for line in todo.solution.splitlines():
            if len(line.strip()) > 25:  # short lines (`return h`) may also stand in given code
                assert line.strip() not in stub, f"{todo.label}: {line.strip()!r} leaked into the stub"


def test_it_makes_stubs_that_still_parse_and_keep_every_docstring():
    for path in SOLUTIONS.glob("*.py"):
        solution, stub = ast.parse(path.read_text()), ast.parse((EXERCISES / path.name).read_text())
        docstrings = [ast.get_docstring(node) for node in ast.walk(solution) if isinstance(node, ast.FunctionDef)]
        assert docstrings == [ast.get_docstring(node) for node in ast.walk(stub) if isinstance(node, ast.FunctionDef)]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("    ### BEGIN SOLUTION\n    x = 1\n", "never closed"),
        ("    ### END SOLUTION\n", "without BEGIN"),
        ("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n", "needs a '# TODO · name"),
    ],
)
def test_it_refuses_markers_it_cannot_turn_into_a_stub(source, message):
    with pytest.raises(stubs.MarkerError, match=message):
        stubs.strip_solutions(source)


def test_it_writes_the_stubs_and_removes_stale_modules(tmp_path):
    (tmp_path / "old.py").write_text("x = 1\n")
    changed = stubs.write_exercises(SOLUTIONS, tmp_path)
    assert "old.py" in changed and not (tmp_path / "old.py").exists()
    assert stubs.differences(SOLUTIONS, tmp_path) == []

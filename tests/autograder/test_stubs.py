"""The stub generator: exercises/ is exactly what solutions/ produces, and each stub names its TODO."""

import ast

import pytest
from support import EXERCISES, SOLUTIONS, code_without_docstrings

from autograder import stubs

CONTRACT_FUNCTIONS = {
    "rnn_forward", "lstm_step", "encode_packed", "gather_final", "masked_mean", "set_forget_bias",
    "next_token_loss", "sample", "SequenceClassifier.forward", "train_step", "bag_of_counts", "fit_baseline",
}  # fmt: skip

SAMPLE = '''def double(x):
    """Twice x."""
    # TODO 3 · doubling: multiply by two.
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION
'''


def test_it_keeps_exercises_byte_identical_to_the_generated_stubs():
    assert stubs.differences() == [], "run `autograde stubs` after changing solutions/"


def test_it_replaces_each_region_with_a_not_implemented_error_naming_the_todo():
    stub = stubs.strip_solutions(SAMPLE)
    assert "return 2 * x" not in stub and "BEGIN SOLUTION" not in stub
    assert '    raise NotImplementedError("TODO 3 · doubling: not implemented yet")\n' in stub
    assert "    # TODO 3 · doubling: multiply by two.\n" in stub


def test_it_copies_files_without_regions_unchanged():
    assert stubs.generate()["data.py"] == (SOLUTIONS / "data.py").read_text()


def test_it_finds_one_todo_per_contract_function_in_number_order():
    todos = stubs.todos()
    assert [todo.number for todo in todos] == list(range(1, len(todos) + 1))
    assert {todo.function for todo in todos} == CONTRACT_FUNCTIONS


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
        ("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n", "needs a '# TODO N · name"),
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

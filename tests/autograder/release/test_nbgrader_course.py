"""The nbgrader course: generated from solutions/ and the rubric, run through the real nbgrader.

The slow tests share one pipeline (module fixtures): `autograde nbgrader`, then, with the course
directory as working directory, `nbgrader generate_assignment`, and `nbgrader autograde` plus
`nbgrader generate_feedback` for three students: the source notebooks submitted as they are,
the release untouched, and the source with one catalogue mistake. Each student is graded in
a copy of the course made after generate_assignment, so the three run at once.
"""

import re
import shutil
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from nbformat.notebooknode import NotebookNode
from support import code_without_docstrings, rubric_file
from traitlets.config.loader import PyFileConfigLoader

from autograder import cli, rubric, stubs, todos
from autograder.checks.compare import CheckFailure
from autograder.locations import SOLUTIONS
from autograder.notebook_feedback import Feedback, feedback
from autograder.release import nbgrader_course

ASSIGNMENT = nbgrader_course.ASSIGNMENT
GATHER_LAST = "    return output[:, -1]\n"  # catalogue mistake G1: the state after the padding
WARNS = "    lengths = torch.tensor(lengths)  # right, but PyTorch warns on stderr\n"
STUDENTS = ("reference", "untouched", "mistaken")


def cells(notebook: NotebookNode, **metadata: object) -> list[NotebookNode]:
    """The cells whose nbgrader metadata has these values."""
    found = []
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if all(meta.get(key) == value for key, value in metadata.items()):
            found.append(cell)
    return found


def grade_id(cell: NotebookNode) -> str:
    return cell.metadata["nbgrader"]["grade_id"]


cell_id = nbgrader_course.grade_cell_id


def read_all(folder: Path) -> dict[str, NotebookNode]:
    return {module: nbformat.read(folder / f"{module}.ipynb", as_version=4) for module in stubs.MODULES}


def todo_of(item: rubric.Item) -> stubs.Todo:
    return next(todo for todo in stubs.todos() if todo.function.split(".")[0] == item.function)


# -- the generated course, without nbgrader ---------------------------------------------------
@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    course = tmp_path_factory.mktemp("built")
    assert cli.main(["nbgrader", str(course)]) == 0
    return course


def test_it_writes_the_config_and_one_valid_notebook_per_exercise_module(built):
    assert (built / "nbgrader_config.py").is_file()
    assert sorted(path.stem for path in (built / "source" / ASSIGNMENT).glob("*.ipynb")) == sorted(stubs.MODULES)
    for notebook in read_all(built / "source" / ASSIGNMENT).values():
        nbformat.validate(notebook)
        assert cells(notebook, grade_id="setup", locked=True, grade=False)


def test_it_gives_each_rubric_item_one_locked_test_cell_worth_its_points(built):
    graded = {
        grade_id(cell): cell
        for notebook in read_all(built / "source" / ASSIGNMENT).values()
        for cell in cells(notebook, grade=True)
    }
    grading = rubric.load()
    assert sorted(graded) == sorted(cell_id(item) for item in grading.items)
    for item in grading.items:
        meta = graded[cell_id(item)].metadata["nbgrader"]
        assert (meta["points"], meta["locked"], meta["solution"]) == (item.points, True, False)
    assert sum(cell.metadata["nbgrader"]["points"] for cell in graded.values()) == grading.total


def hidden_tests(notebooks: dict[str, NotebookNode]) -> dict[str, str]:
    """Each graded cell's hidden region, by its grade_id."""
    sources = {grade_id(c): c.source for notebook in notebooks.values() for c in cells(notebook, grade=True)}
    return {
        key: text[text.index("### BEGIN HIDDEN TESTS") : text.index("### END HIDDEN TESTS")]
        for key, text in sources.items()
    }


def test_it_calls_in_each_hidden_test_the_check_its_hidden_suite_calls_through_the_registry(built):
    hidden = hidden_tests(read_all(built / "source" / ASSIGNMENT))
    for item in rubric.load().items:
        assert "from autograder.todos import run_check as _run_check\n" in hidden[cell_id(item)]
        assert f'    _run_check("{item.function}", "{item.aspect}", _InProcess(globals()))\n' in hidden[cell_id(item)]
        assert todos.check(item.function, item.aspect)  # the one rule finds the check the cell names
    assert not any("autograder.checks" in text for text in hidden.values())  # no module path baked in


def test_it_hands_a_sections_rubric_to_the_threshold_items_checks_alone(tmp_path):
    section = rubric.load(rubric_file(tmp_path / "section.toml"))
    hidden = hidden_tests({"classifier": nbgrader_course.build_notebook("classifier", section)})
    trains, plain = hidden["test_SequenceClassifier_learns_the_task"], hidden["test_SequenceClassifier_last_pooling"]
    assert "_rubric = _loads(" in trains and "_rubric" not in plain
    assert '    _run_check("SequenceClassifier", "learns_the_task", _InProcess(globals()), _rubric)\n' in trains
    assert '    _run_check("SequenceClassifier", "last_pooling", _InProcess(globals()))\n' in plain


def test_it_puts_each_todo_in_one_answer_cell_with_its_region_and_the_stub_that_names_it(built):
    sources = read_all(built / "source" / ASSIGNMENT)
    for todo in stubs.todos():
        [answer] = cells(sources[todo.module], grade_id=f"answer_{todo.function.replace('.', '_')}")
        assert answer.metadata["nbgrader"] | {"checksum": None} == {
            "grade_id": grade_id(answer), "solution": True, "grade": False, "locked": False,
            "schema_version": 3, "checksum": None,
        }  # fmt: skip
        assert todo.solution in answer.source and "### BEGIN SOLUTION" in answer.source
        assert f'raise NotImplementedError("{todo.label}: not implemented yet")' in answer.source
    [classifier] = cells(sources["classifier"], grade_id="answer_SequenceClassifier_forward")
    assert classifier.source.startswith("class SequenceClassifier(nn.Module):") and "def __init__(" in classifier.source


def test_it_fills_the_answer_cells_with_the_definitions_written_in_a_module_file(tmp_path):
    grading = rubric.load()
    for module in stubs.MODULES:
        todos = [todo for todo in stubs.todos() if todo.module == module]
        answers = {todo.number: f"    # answer {todo.number}" for todo in todos}
        source = (SOLUTIONS / f"{module}.py").read_text()
        for todo in todos:
            source = source.replace(todo.solution, answers[todo.number] + "\n", 1)
        (tmp_path / f"{module}.py").write_text(source)
        notebook = nbgrader_course.fill_answers(
            nbgrader_course.build_notebook(module, grading), tmp_path / f"{module}.py"
        )
        for todo in todos:
            [answer] = cells(notebook, grade_id=nbgrader_course.answer_id(todo))
            assert answers[todo.number] in answer.source, todo.label
            assert answer.source in source, f"{todo.label}: the cell is not the module's definition"
            assert not any(answers[todo.number] in cell.source for cell in notebook.cells if cell is not answer)


def test_it_runs_the_visible_smoke_tests_green_on_the_reference(built):
    for notebook in read_all(built / "source" / ASSIGNMENT).values():
        namespace: dict[str, object] = {}
        for cell in notebook.cells:  # the set-up cell is left out: it would set this process's threads
            if cell.cell_type == "code" and not cell.metadata["nbgrader"]["grade"] and grade_id(cell) != "setup":
                exec(compile(cell.source, grade_id(cell), "exec"), namespace)


def test_it_sizes_the_cell_timeout_for_the_training_runs_and_drops_warnings_from_stderr(built):
    from nbgrader.preprocessors import Execute, IgnorePattern

    config = PyFileConfigLoader("nbgrader_config.py", path=str(built)).load_config()
    longest = max(recipe.timeout * len(recipe.seeds) for recipe in rubric.load().recipes)
    assert Execute(config=config).timeout > longest
    cell = nbformat.v4.new_code_cell("x")
    warning = "[W1130 10:00:00.000000 7 Loops.cpp:1] Warning: a PyTorch warning from C++ (function f)\n"
    cell.outputs = [nbformat.v4.new_output("stream", name="stderr", text=warning)]
    ignore = IgnorePattern(config=config)
    assert ignore.enabled and ignore.preprocess_cell(cell, {}, 0)[0].outputs == []


def test_it_turns_a_failed_check_into_its_message_alone_and_silences_warnings():
    # Python's warning machinery records what it would print on the kernel's stderr ("always": even a repeat)
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        warnings.warn("outside a check: shown", UserWarning, stacklevel=1)
        with pytest.raises(Feedback) as raised, feedback("gather_final: values"):
            warnings.warn("inside a check: would land on stderr", UserWarning, stacklevel=1)
            raise CheckFailure("[G1] Your final states equal output[:, -1].")
    assert raised.value._render_traceback_() == [
        "gather_final: values did not pass.",
        "[G1] Your final states equal output[:, -1].",
    ]
    assert [str(warning.message) for warning in shown] == ["outside a check: shown"]


# -- the real pipeline ----------------------------------------------------------------------
def over_ipc(course: Path) -> list[str]:
    """Kernels talk over Unix sockets in the course folder, not TCP ports: jupyter_client picks a kernel's
    ports free, closes them and lets the kernel bind them, so kernels started at once by the three students'
    runs (or another test) can race for a port, and the loser dies before kernel_info (jupyter/jupyter_client
    #154). Each copy has its own folder, so its sockets are its own (an absolute path: a kernel runs in the
    notebook's folder, nbgrader in the course's)."""
    return ["--KernelManager.transport=ipc", f"--KernelManager.ip={course.resolve() / 'kernel'}"]


def nbgrader(course: Path, *arguments: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "nbgrader", *arguments, *over_ipc(course)],
        cwd=course,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def finish(process: subprocess.Popen, timeout: float = 900) -> str:
    output, _ = process.communicate(timeout=timeout)
    assert process.returncode == 0, first_error(output) + output[-4000:]
    return output


def first_error(output: str) -> str:
    """The first traceback's opening lines (a kernel's own error comes before nbgrader's long one)."""
    start = output.find("Traceback")
    return "" if start < 0 else output[start : start + 2000] + "\n[...]\n"


def mistaken(source: Path, target: Path) -> None:
    """The source notebooks with gather_final returning output[:, -1] and a masked_mean that warns."""
    padding = nbformat.read(source / "padding.ipynb", as_version=4)
    [gather] = cells(padding, grade_id="answer_gather_final")
    begin, end = gather.source.index("    ### BEGIN SOLUTION"), gather.source.index("    ### END SOLUTION")
    gather.source = gather.source[:begin] + GATHER_LAST + gather.source[end:]
    [mean] = cells(padding, grade_id="answer_masked_mean")
    mean.source = mean.source.replace("    ### BEGIN SOLUTION\n", "    ### BEGIN SOLUTION\n" + WARNS)
    nbformat.write(padding, target / "padding.ipynb")


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A built course after `nbgrader generate_assignment`."""
    course = tmp_path_factory.mktemp("course")
    nbgrader_course.build_course(course)
    finish(nbgrader(course, "generate_assignment", ASSIGNMENT, "--force"))
    return course


@pytest.fixture(scope="module")
def graded(course: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Student -> their course copy, autograded and with feedback generated."""
    copies = {}
    for student in STUDENTS:
        copy = tmp_path_factory.mktemp(student) / "course"
        shutil.copytree(course, copy)
        submitted = copy / "submitted" / student / ASSIGNMENT
        base = copy / ("release" if student == "untouched" else "source") / ASSIGNMENT
        shutil.copytree(base, submitted, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        if student == "mistaken":
            mistaken(base, submitted)
        copies[student] = copy
    running = {student: nbgrader(copy, "autograde", ASSIGNMENT, "--force") for student, copy in copies.items()}
    for process in running.values():
        finish(process)
    for copy in copies.values():
        finish(nbgrader(copy, "generate_feedback", ASSIGNMENT, "--force"))
    return copies


def grades(course: Path, student: str) -> Iterator[tuple[str, float, float]]:
    """(grade cell, score, max score) from nbgrader's gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for notebook in gradebook.find_submission(ASSIGNMENT, student).notebooks:
            for grade in notebook.grades:
                yield grade.name, grade.score, grade.max_score


def feedback_html(course: Path, student: str) -> str:
    return "".join(path.read_text() for path in sorted((course / "feedback" / student / ASSIGNMENT).glob("*.html")))


@pytest.mark.nbgrader
def test_it_releases_notebooks_without_solutions_or_hidden_tests(course):
    released = read_all(course / "release" / ASSIGNMENT)
    text = "\n".join(
        code_without_docstrings(cell.source) if cell.cell_type == "code" else cell.source
        for notebook in released.values()
        for cell in notebook.cells
    )
    for todo in stubs.todos():
        for line in todo.solution.splitlines():
            if len(line.strip()) > 25:
                assert line.strip() not in text, f"{todo.label}: {line.strip()!r} is in the release"
        assert f'raise NotImplementedError("{todo.label}: not implemented yet")' in text
    assert not re.search(r"check_|HIDDEN TESTS|SOLUTION|autograder", text)


@pytest.mark.nbgrader
def test_it_gives_the_source_notebooks_every_point_of_the_rubric(graded):
    grading = rubric.load()
    found = {name: (score, maximum) for name, score, maximum in grades(graded["reference"], "reference")}
    assert found == {cell_id(item): (item.points, item.points) for item in grading.items}


@pytest.mark.nbgrader
def test_it_gives_the_untouched_release_0_with_each_item_naming_its_todo(graded):
    assert {score for _, score, _ in grades(graded["untouched"], "untouched")} == {0}
    html = feedback_html(graded["untouched"], "untouched")
    for todo in stubs.todos():
        assert f"{todo.label} is not done yet: it still raises NotImplementedError." in html


@pytest.mark.nbgrader
def test_it_takes_only_the_mistaken_item_and_names_the_mistake_in_the_feedback(graded):
    grading = rubric.load()
    found = {name: score for name, score, _ in grades(graded["mistaken"], "mistaken")}
    lost = [item for item in grading.items if item.function == "gather_final" and item.aspect == "values"]
    assert found == {cell_id(item): 0 if item in lost else item.points for item in grading.items}  # G1: values only
    assert "[G1] Your final states equal output[:, -1]" in feedback_html(graded["mistaken"], "mistaken")


@pytest.mark.nbgrader
def test_it_keeps_the_hidden_tests_and_the_graders_source_out_of_the_feedback(graded):
    first = rubric.load().items[0]
    for student, copy in graded.items():
        html = feedback_html(copy, student)
        assert f"Hidden test · {first.name} ({first.points:g} points)" in html  # what the student may see
        for secret in ("check_", "HIDDEN TESTS", "_InProcess", "autograder/"):
            assert secret not in html, f"{student}: {secret!r} shows in the feedback"

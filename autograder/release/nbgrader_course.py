"""The nbgrader course: one notebook per exercise module, generated from solutions/ and the rubric.

`build_course(COURSE_DIR)` writes `nbgrader_config.py` and `source/<assignment>/<module>.ipynb`.
Each notebook follows its module:

* an introduction (the module's docstring) and a set-up cell (the grader's seeds, one thread);
* the given code (imports, constants, given classes, the data helpers its smoke tests use);
* per TODO: an introduction; the answer cell, the function (or the whole class) with its
  solution region, which `nbgrader generate_assignment` strips; a visible smoke test, not
  graded; one autograded test cell per rubric item, worth the rubric's points, whose hidden
  region calls the same check as the hidden suite on the notebook's own objects.

Every cell but the answers is read-only. The notebooks are generated, never edited.
"""

import ast
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import nbformat
from nbformat.notebooknode import NotebookNode

from autograder import TITLE, rubric, stubs, todos
from autograder.locations import RUBRIC, SOLUTIONS

ASSIGNMENT = "week07"
COURSE_ID = "week07-recurrent-networks"
DATA_HELPERS = {
    "language_model": ("make_pattern",),
    "classifier": ("PAD", "make_padded_sequences"),
    "baseline": ("make_sequences",),
}
TIMEOUT_MARGIN = 60  # seconds a cell gets beyond its training runs' own limits
KERNEL = {
    "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
    "language_info": {"name": "python"},
}
SETUP = """\
# Set-up (read-only): the grader's seeds and thread count, so that your runs match the grading.
import random

import numpy as np
import torch

torch.manual_seed(0)
random.seed(0)
np.random.seed(0)
torch.set_num_threads(1)"""


def _cell(kind: str, source: str, grade_id: str, **nbgrader: object) -> NotebookNode:
    """A cell with nbgrader's metadata; read-only unless `locked=False`."""
    meta = {"grade_id": grade_id, "solution": False, "grade": False, "locked": True, "schema_version": 3}
    meta.update(nbgrader)
    new = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
    return new(source, id=grade_id.replace("_", "-"), metadata={"nbgrader": meta})


class Definition(NamedTuple):
    name: str  # what the statement defines ("" for one that names nothing)
    source: str


class Module(NamedTuple):
    docstring: str
    definitions: list[Definition]  # one per top-level statement, in order


def _definitions(source: str) -> Module:
    """The module docstring, and each top-level statement's definition, in a module's `source`.

    A statement's source runs from the unindented comments above it to the next one's, so
    the comments closing an indented block (`### END SOLUTION`) stay with their block.
    """
    tree, lines = ast.parse(source), source.splitlines(keepends=True)
    docstring = ast.get_docstring(tree) or ""
    body = tree.body[1:] if docstring else tree.body
    starts = []
    for node in body:
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
        while start > 0 and lines[start - 1].startswith("#"):
            start -= 1
        starts.append(start)
    pieces = []
    for node, start, end in zip(body, starts, [*starts[1:], len(lines)], strict=True):
        targets = getattr(node, "targets", [])
        name = getattr(node, "name", None) or (targets[0].id if targets and isinstance(targets[0], ast.Name) else "")
        pieces.append(Definition(name, "".join(lines[start:end])))
    return Module(docstring, pieces)


def _numbered(path: Path) -> str:
    """A solution file's text with its TODO comments numbered ("# TODO 2 · LSTM step: ..."), as the stubs have them."""
    return stubs.numbered(path.read_text(encoding="utf-8"), path, stubs.firsts(path.parent).get(path.name, 1))


def _docstring(source: str, function: str) -> str:
    """The docstring of `function` ("f" or "Class.method") defined in `source`."""
    node: ast.AST = ast.parse(source)
    for part in function.split("."):
        node = next(n for n in ast.iter_child_nodes(node) if getattr(n, "name", None) == part)
    return ast.get_docstring(node) or ""


def _answer(source: str, todo: stubs.Todo) -> str:
    """The answer cell: after the region, the stub's own raise, naming the TODO (unreachable here)."""
    last = ast.parse(textwrap.dedent(todo.solution)).body[-1]
    if not isinstance(last, ast.Return):
        raise ValueError(f"{todo.label}: the solution region must end with its return")
    lines = []
    for line in source.splitlines():
        lines.append(line)
        if line.strip() == stubs.END:
            indent = line[: len(line) - len(line.lstrip())]
            lines.append(f'{indent}raise NotImplementedError("{todo.label}: not implemented yet")')
    return "\n".join(lines)


def _introduction(todo: stubs.Todo, docstring: str, items: list[rubric.Item]) -> str:
    paragraphs = docstring.split("\n\n")
    lesson = [p.split("\nTrap")[0] for p in paragraphs if p.lstrip().startswith("Lesson:")]
    points = ", ".join(f"{item.aspect.replace('_', ' ')} ({item.points:g})" for item in items)
    return "\n\n".join(
        [
            f"## {todo.label}: `{todo.function}`",
            paragraphs[0].strip(),
            *(" ".join(p.split()) for p in lesson),
            f"**To do:** {todo.hint.split(':', 1)[1].strip()}",
            f"The docstring in the cell below gives the shapes and the traps. After it: a quick visible check, "
            f"then hidden tests worth {sum(item.points for item in items):g} points: {points}.",
        ]
    )


def _test_cell(item: rubric.Item, grading: rubric.Rubric) -> NotebookNode:
    """The item's autograded test cell: its hidden region runs the item's check as the hidden suite does, through the
    registry (`todos.run_check`), so that the import nbgrader keeps in gradebook.db holds wherever the check moves."""
    given = ", _rubric" if _by_section(item, grading) else ""
    source = (
        f"# Hidden test · {item.name} ({item.points:g} points)\n"
        "### BEGIN HIDDEN TESTS\n"
        "from autograder.todos import run_check as _run_check\n"
        "from autograder.notebook_feedback import feedback as _feedback\n"
        "from autograder.student import InProcess as _InProcess\n"
        f"{_section_rubric(item, grading)}\n"
        f'with _feedback("{item.name}"):\n'
        f'    _run_check("{item.function}", "{item.aspect}", _InProcess(globals()){given})\n'
        "### END HIDDEN TESTS"
    )
    return _cell("code", source, grade_cell_id(item), grade=True, points=item.points)


def _by_section(item: rubric.Item, grading: rubric.Rubric) -> bool:
    """Whether the item's check needs `grading` handed to it: a threshold item, by another rubric than the grader's
    own (which the check reads by itself when nbgrader runs it)."""
    return grading.path != RUBRIC and grading.recipe(item.function, item.aspect) is not None


def _section_rubric(item: rubric.Item, grading: rubric.Rubric) -> str:
    """The lines that give a threshold item's check a section's rubric: its whole text, inside the hidden tests
    (nbgrader strips them from what students get and see)."""
    if not _by_section(item, grading):
        return ""
    return (
        "from pathlib import Path as _Path\n"
        "from autograder.rubric import loads as _loads\n"
        f"_rubric = _loads({grading.text!r}, _Path({grading.path.name!r}))\n"
    )


def grade_cell_id(item: rubric.Item) -> str:
    """The grade_id of the autograded test cell of a rubric item."""
    return f"test_{item.function}_{item.aspect}"


def answer_id(todo: stubs.Todo) -> str:
    """The grade_id of the answer cell of `todo`: by its function alone, so a TODO added before it keeps its id (the
    gradebook's, students' submitted notebooks')."""
    return f"answer_{todo.function.replace('.', '_')}"


def fill_answers(notebook: NotebookNode, module: Path) -> NotebookNode:
    """`notebook` with each answer cell holding that definition as written in `module` (exercises/NAME.py).

    The same work as a notebook submission: used to grade one roster both ways. A definition
    missing from the module leaves the answer cell as released.
    """
    _, pieces = _definitions(module.read_text(encoding="utf-8"))
    written = dict(pieces)
    for todo in stubs.todos():
        name = todo.function.split(".")[0]
        for cell in notebook.cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id") == answer_id(todo) and name in written:
                cell.source = written[name].strip()
    return notebook


def build_notebook(module: str, grading: rubric.Rubric) -> NotebookNode:
    """The notebook of one exercise module."""
    path = SOLUTIONS / f"{module}.py"
    source = _numbered(path)
    docstring, pieces = _definitions(source)
    tasks = {todo.function.split(".")[0]: todo for todo in stubs.todos() if todo.module == module}
    title = f"# {TITLE}: `{module}`\n\n{docstring}\n\nWrite your code in the cells marked "
    title += "`YOUR CODE HERE`; run each cell below your answer to check it. Every other cell is read-only."
    cells = [_cell("markdown", title, f"intro_{module}"), _cell("code", SETUP, "setup")]
    cells[-1].metadata["jupyter"] = {"source_hidden": True}
    given = "".join(text for name, text in pieces if name not in tasks).strip()
    cells.append(_cell("code", f"# Given code (read-only)\n{given}", "given_code"))
    _, data = _definitions((SOLUTIONS / "data.py").read_text(encoding="utf-8"))
    helpers = [text.strip() for name, text in data if name in DATA_HELPERS.get(module, ())]
    if helpers:
        cells.append(_cell("code", "# Given data helpers, from data.py (read-only)\n" + "\n\n\n".join(helpers), "data"))
    for name, text in pieces:
        if name not in tasks:
            continue
        todo = tasks[name]
        items = [item for item in grading.items if item.function == name]
        key = todo.function.replace(".", "_")
        cells.append(_cell("markdown", _introduction(todo, _docstring(source, todo.function), items), f"about_{key}"))
        cells.append(_cell("code", _answer(text.strip(), todo), answer_id(todo), solution=True, locked=False))
        cells.append(
            _cell(
                "code",
                f"# A quick check (not graded)\n{todos.by_function()[todo.function].smoke.rstrip()}",
                f"smoke_{key}",
            )
        )
        cells.extend(_test_cell(item, grading) for item in items)
    notebook = nbformat.v4.new_notebook(cells=cells, metadata=KERNEL)
    nbformat.validate(notebook)
    return notebook


def cell_timeout(grading: rubric.Rubric) -> int:
    """Seconds per cell: a threshold item trains once per seed, each run within its own limit."""
    runs = [recipe.timeout * len(recipe.seeds) for recipe in grading.recipes]
    return int(max(runs, default=0)) + TIMEOUT_MARGIN


def config_text(grading: rubric.Rubric, course_id: str = COURSE_ID) -> str:
    return f'''\
"""nbgrader's configuration for the week-07 course: generated by `autograde nbgrader`, rebuild rather than edit."""

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import ClearHiddenTests, GetGrades

c = get_config()  # noqa: F821 (nbgrader provides it)
c.CourseDirectory.course_id = "{course_id}"

# The stub is the answer cell's own line after the solution region,
# raise NotImplementedError("TODO N · name: not implemented yet"), so feedback names the TODO.
c.ClearSolutions.code_stub = {{"python": "# YOUR CODE HERE"}}

# One test cell may train a model once per seed (the threshold items of the rubric).
c.ExecutePreprocessor.timeout = {cell_timeout(grading)}

# nbgrader scores a test cell 0 when it writes to stderr. The hidden tests silence Python's
# warnings; this drops any warning that still reaches stderr (from C++, say).
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = r"Warning"

# Feedback is the autograded notebook: strip the hidden tests' source from it. Their failures
# show the check's message only (autograder/notebook_feedback.py).
c.GenerateFeedback.preprocessors = [GetGrades, ClearHiddenTests, CSSHTMLHeaderPreprocessor]
'''


def build_course(
    course: Path,
    assignment: str = ASSIGNMENT,
    grading: rubric.Rubric | None = None,
    progress: Callable[[int, int, str], None] = lambda *_: None,
) -> list[Path]:
    """Write nbgrader_config.py and source/<assignment>/*.ipynb (their points and thresholds from `grading`, the
    grader's own rubric when None); return the files written. `progress(done, total, module)` after each notebook."""
    grading = grading or rubric.load()
    folder = course / "source" / assignment
    folder.mkdir(parents=True, exist_ok=True)
    written = [course / "nbgrader_config.py"]
    written[0].write_text(config_text(grading), encoding="utf-8")
    progress(0, len(stubs.MODULES), "")
    for done, module in enumerate(stubs.MODULES, 1):
        target = folder / f"{module}.ipynb"
        nbformat.write(build_notebook(module, grading), target)
        written.append(target)
        progress(done, len(stubs.MODULES), module)
    return written

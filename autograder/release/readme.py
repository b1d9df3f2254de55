"""The student repository's README.md, written from the TODOs and the rubric.

It says what the week is, how to set up and run the public tests, which TODO follows which
lesson, and how grading works: points per item, the training thresholds (what is trained, the
accuracy needed, and the command that checks them with the grader's recipe).
"""

import ast
from pathlib import Path

from autograder import TITLE
from autograder.locations import EXERCISES
from autograder.rubric import Item, Rubric
from autograder.stubs import Todo
from autograder.text import cell, number

TORCH = "torch==2.13.0"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def _docstring(module: Path, qualified: str) -> str:
    node: ast.AST = ast.parse(module.read_text(encoding="utf-8"))
    for name in qualified.split("."):
        node = next(
            child
            for child in ast.iter_child_nodes(node)
            if isinstance(child, (ast.ClassDef, ast.FunctionDef)) and child.name == name
        )
    return ast.get_docstring(node) or ""


def lesson(todo: Todo, exercises: Path = EXERCISES) -> str:
    """The docstring's 'Lesson:' paragraph (up to the traps or a blank line), on one line."""
    lines = _docstring(exercises / f"{todo.module}.py", todo.function).splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip().startswith("Lesson:")), None)
    if start is None:
        return ""
    taken = []
    for line in lines[start:]:
        text = line.strip()
        if not text or (taken and text.startswith("Trap")):
            break
        taken.append(text)
    return " ".join(taken).removeprefix("Lesson:").strip()


def items_of(todo: Todo, rubric: Rubric) -> list[Item]:
    return [item for item in rubric.items if item.function == todo.function.split(".")[0]]


def todo_table(todos: list[Todo], rubric: Rubric, exercises: Path) -> list[str]:
    lines = ["| TODO | function | points | lesson |", "|---|---|---:|---|"]
    for todo in todos:
        points = sum(item.points for item in items_of(todo, rubric))
        lines.append(
            f"| {todo.number} · {todo.name} | `{todo.module}.{todo.function}` | {number(points)} "
            f"| {cell(lesson(todo, exercises))} |"
        )
    return lines


def points_table(todos: list[Todo], rubric: Rubric) -> list[str]:
    lines = ["| TODO | item | points |", "|---|---|---:|"]
    for todo in todos:
        for item in items_of(todo, rubric):
            lines.append(f"| {todo.number} | {item.name} | {number(item.points)} |")
    lines.append(f"| | **total** | **{number(rubric.total)}** |")
    return lines


def threshold_table(rubric: Rubric) -> list[str]:
    lines = ["| item | what is trained | you need |", "|---|---|---|"]
    for recipe in rubric.recipes:
        lines.append(f"| {recipe.name} | {cell(recipe.describe)} | accuracy ≥ {recipe.threshold:g} |")
    return lines


def stub_failure(todo: Todo, exercises: Path) -> str:
    """The one line a public test fails with while `todo` is not written (exercises/tests/conftest.py)."""
    raised = f"{todo.label}: not implemented yet"
    lines = (exercises / f"{todo.module}.py").read_text(encoding="utf-8").splitlines()
    line = next(number for number, text in enumerate(lines, 1) if raised in text and "raise" in text)
    return f"{raised} (exercises/{todo.module}.py, line {line}, in {todo.function.split('.')[-1]})"


def readme(todos: list[Todo], rubric: Rubric, exercises: Path = EXERCISES) -> str:
    call_timeout = number(rubric.limits.call_timeout)
    memory_gb = number(rubric.limits.memory_mb / 1024)
    text = [
        f"# {TITLE} — exercises",
        "",
        "This week you write by hand what PyTorch's recurrent layers do for you: the recurrence loop and",
        "one LSTM step, packing a padded batch and gathering each row's last real state, the forget-bias",
        "initialisation, the shifted next-token loss and sampling from a language model, a sequence",
        "classifier with its training step, and the order-blind baseline it has to beat.",
        "",
        f"There are {len(todos)} TODOs, one function each, in `exercises/`. Every function's docstring gives",
        "the shapes, the lesson it follows and the trap to avoid. Until you write it, a function raises",
        '`NotImplementedError("TODO N · name: not implemented yet")`.',
        "",
        "## Set up (CPU only, two commands)",
        "",
        "Install the CPU build of torch first (the default build of torch is a multi-GB CUDA download), then",
        "this repository:",
        "",
        f"    python -m pip install {TORCH} --index-url {CPU_INDEX}",
        "    python -m pip install -e .",
        "",
        "A virtual environment is a good idea (`python -m venv .venv`, then activate it before the two",
        "commands). Python 3.11 or newer.",
        "",
        "## Run the public tests",
        "",
        "    python -m pytest                                   # all of them, a few seconds",
        "    python -m pytest exercises/tests/test_padding.py   # one module",
        "    python -m pytest exercises/tests/test_padding.py::test_gather_final_matches_the_row_by_row_definition",
        "",
        "The public tests check shapes, small cases you can verify by hand and what the lessons show.",
        "Each test file has one section per TODO. While a TODO is not written, each of its tests fails in one",
        f"line that names it and where its stub raises, e.g. `{stub_failure(todos[0], exercises)}`.",
        "",
        "When a test fails the way one of the course's common mistakes makes it fail, its message starts with",
        "that mistake and the lesson to reread, as the grader's feedback does, e.g.",
        "`[G1] Your final states equal output[:, -1]: ... Gather at lengths - 1.` The values this compares",
        "with are in `exercises/tests/mistakes.json` (numbers computed from the tests' own inputs).",
        "",
        "## The TODOs",
        "",
        *todo_table(todos, rubric, exercises),
        "",
        "`exercises/data.py` (the lesson's data generators) and `language_model.NextTokenModel` are given code.",
        "",
        "## How grading works",
        "",
        "- Only your `exercises/*.py` modules are read. Edited public tests, a `conftest.py`, pytest settings",
        "  or changes to the workflow do not change the grade.",
        "- The grader imports your modules in a separate process and checks each function with its own",
        "  tests, on inputs you do not see. Passing every public test is a good sign, not a guarantee of",
        "  full marks.",
        f"- Each call of your code has {call_timeout} seconds and {memory_gb} GB of memory. A hang or a crash",
        "  costs only the item it happens in.",
        "- When an output is wrong, the feedback says where (which row, which step, expected and got) and,",
        "  for a known mistake, names it and the lesson to reread, e.g. `[G1] ... Gather at lengths - 1`.",
        "- The same code gets the same score on every run: seeds and thread counts are fixed.",
        "",
        "### What is graded",
        "",
        *points_table(todos, rubric),
        "",
        "### Training thresholds",
        "",
        "Some items train a small model with the grader's own training loop around your code and compare",
        "the median accuracy over a few seeded runs with a threshold:",
        "",
        *threshold_table(rubric),
        "",
        "Check them yourself before the deadline (under half a minute on a laptop's CPU):",
        "",
        "    python -m exercises.check_training                # every item, stopped as the grader stops it",
        "    python -m exercises.check_training --seeds 1      # one seed per item: quicker, less sure",
        "    python -m exercises.check_training --full-length  # every seed to its last epoch: slower",
        "",
        "It runs the grader's own training code (`exercises/check_training/recipe.py`) with the grader's",
        "settings and prints each median accuracy against its threshold and the lesson's figure, in the",
        "grader's words. Like the grader, it stops a training once its accuracy is past the threshold by the",
        "recipe's margin (it says where), and skips a seed once the others decide the median; the seeds it",
        "trains run side by side on your cores. Only the data differ (rows from other seeds), so your grade's",
        "accuracies will be close to these, not equal. The classifier's LSTM starts with its forget gate",
        "opened by your own `set_forget_bias`, where the grader uses its own: do set_forget_bias first.",
        "",
        "## Continuous integration",
        "",
        "Every push and pull request runs the public tests (`.github/workflows/public-tests.yml`). Its",
        "environment is the one pinned, with hashes, in `requirements.lock`: installed once, then restored",
        "from the workflow's cache on every push until that file changes. The run's",
        "summary page shows a table with the public tests passed and failed per TODO and, for a failing TODO,",
        "the first line of its failure: the named mistake, when a failure names one.",
        "",
        "If your instructor has enabled it, a second job, *Preview grade*, runs the course grader on your",
        "repository. It runs in your repository, under your control: it is feedback to help you, not your",
        "grade. Your grade comes from a grading run by the course staff on the commit you have pushed by the",
        "deadline.",
        "",
    ]
    return "\n".join(text)

"""Ask the reference, once for an installation, every question the checks read from the memo (checks/memo.py).

    python -m autograder.checks.remember

Gradescope's setup.sh runs it: the image keeps the answers, and no grading in it imports scikit-learn for
the reference. Anywhere else the first grading keeps them; this only does it ahead of time. The questions are the
exercises' own: each checks module that asks the memo lists its questions (`questions()`).
"""

import importlib
from pathlib import Path

from autograder import todos
from autograder.checks import memo


def questions() -> list[tuple[str, tuple]]:
    """Every exercise's questions to the memo, (the reference's function, the arguments), in the TODOs' order."""
    modules = [importlib.import_module(todos.checks_module(record.key)) for record in todos.records()]
    return [question for module in modules if hasattr(module, "questions") for question in module.questions()]


def remember() -> tuple[list[str], Path | None]:
    """The questions asked, and the folder that keeps their answers (None: none kept)."""
    folder = memo.ready()
    asked = questions()
    for target, args in asked:
        memo.reference(target, *args)
    return [target for target, _ in asked], folder


if __name__ == "__main__":
    asked, folder = remember()
    print(f"the reference's answers to {len(asked)} questions kept in {folder or 'no folder (none kept)'}")

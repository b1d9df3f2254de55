"""Every lesson a student is sent to quotes text they can find in the course files.

The references are the catalogue's ("Reread: ...") and the stubs' docstrings ("Lesson: ..."), which
the student README tables. A quote in a part that names the demos must be in the demos file; any
other quote in the lessons file (whitespace aside, as a search in either file finds it).
"""

import re
from pathlib import Path

import pytest

from autograder import stubs
from autograder.checks.catalogue import MISTAKES
from autograder.release import readme

ROOT = Path(__file__).resolve().parents[1]
# the course's shared folder sits beside the repository (or beside the folder of its git worktrees)
COURSE = next((root / "shared" / "course" for root in ROOT.parents[:2] if (root / "shared" / "course").exists()), ROOT)
QUOTE = re.compile(r'"([^"]+)"')

pytestmark = pytest.mark.skipif(
    COURSE == ROOT, reason="the course's lessons and demos (shared/course) are not beside this checkout"
)


def text(name: str) -> str:
    return " ".join((COURSE / name).read_text(encoding="utf-8").split())


REFERENCES = [(f"[{mistake.id}]", mistake.lesson) for mistake in MISTAKES]
REFERENCES += [(f"[{mistake.id}:{form}]", own.lesson) for mistake in MISTAKES for form, own in mistake.forms.items()]
REFERENCES += [(todo.label, readme.lesson(todo)) for todo in stubs.todos()]


@pytest.mark.parametrize(("where", "reference"), REFERENCES, ids=[where for where, _ in REFERENCES])
def test_every_quoted_lesson_is_text_the_student_finds_in_the_course(where, reference):
    lessons, demos = text("week07-lessons.txt"), text("week07-demos.txt")
    assert reference, f"{where} names no lesson"
    for part in reference.split(";"):
        for quote in QUOTE.findall(part):
            quote = " ".join(quote.split())
            source, name = (demos, "demos") if "demo" in part else (lessons, "lessons")
            assert quote in source, f"{where}: {quote!r} is not in the {name}"

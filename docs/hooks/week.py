"""The week's TODOs on the student page, written from the solution markers and the exercises' records.

An MkDocs hook (mkdocs.yml `hooks:`): docs/student.md holds a marker, and the hook puts there one line
per TODO (its number and name, its function, its points) as this checkout's solutions/ and
autograder/todos/ declare them, so that adding a TODO changes no page by hand.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # this checkout: its exercises are the ones listed
MARKER = "<!-- the week's TODOs are listed here (docs/hooks/week.py) -->"
PAGE = "student.md"


def on_page_markdown(markdown: str, page, config, files) -> str:
    """MkDocs' hook: the student page's marker replaced by the list; every other page as it is."""
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"docs/{PAGE} has lost its marker {MARKER!r}")
    return markdown.replace(MARKER, listing())


def listing() -> str:
    """A Markdown table: each TODO's number and name, its module and function, its points."""
    sys.path.insert(0, str(ROOT))
    try:
        from autograder import stubs, todos
    finally:
        sys.path.remove(str(ROOT))
    points = {function: sum(record.points.values()) for function, record in todos.by_function().items()}
    rows = [
        f"| {todo.number} | {todo.name} | `{todo.module}.{todo.function}` | {points[todo.function]:g} |"
        for todo in stubs.todos()
    ]
    return "\n".join(["| TODO | task | function | points |", "|---|---|---|---|", *rows])

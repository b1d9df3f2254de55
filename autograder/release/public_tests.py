"""Which TODO each public test belongs to, read from the public test files.

A public test file `exercises/tests/test_<module>.py` tests the TODOs of `<module>`.
When the module has more than one TODO, a header comment naming its function opens each TODO's section:

    # ---------------------------------------------------------------- TODO · gather_final

and every test function after it (up to the next header) belongs to that TODO. The header names the
function, never a number: a new TODO beside its sibling renumbers nothing here.
"""

import ast
import re
from pathlib import Path
from typing import NamedTuple

from autograder.locations import PUBLIC_TESTS
from autograder.stubs import Todo

HEADER = re.compile(r"^#\s*-+\s*TODO · ([\w.]+)", re.MULTILINE)


class MappingError(ValueError):
    """A public test that cannot be tied to exactly one TODO."""


class Header(NamedTuple):
    """A section header of a public test file: the line it is on, the TODO it opens."""

    line: int
    function: str  # "gather_final", "SequenceClassifier.forward"


def _headers(source: str) -> list[Header]:
    """Every section header, in order."""
    return [Header(source.count("\n", 0, match.start()) + 1, match[1]) for match in HEADER.finditer(source)]


def todo_of_tests(path: Path, todos: list[Todo]) -> dict[str, int]:
    """Test function name -> TODO number for one public test file."""
    module = path.stem.removeprefix("test_")
    numbers = {todo.function: todo.number for todo in todos if todo.module == module}
    source = path.read_text(encoding="utf-8")
    headers = _headers(source)
    unknown = sorted({header.function for header in headers} - set(numbers))
    if unknown:
        raise MappingError(f"{path.name}: a header names {unknown[0]}, which is no TODO of {module}.py")
    mapping = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test")):
            continue
        above = [numbers[header.function] for header in headers if header.line < node.lineno]
        if above:
            mapping[node.name] = above[-1]
        elif len(numbers) == 1:
            mapping[node.name] = next(iter(numbers.values()))
        else:
            raise MappingError(f"{path.name}: {node.name} comes before any '# --- TODO · function' header")
    return mapping


def todo_map(todos: list[Todo], tests: Path = PUBLIC_TESTS) -> dict[str, int]:
    """'test_<module>::<test function>' -> TODO number, for every public test."""
    return {
        f"{path.stem}::{name}": number
        for path in sorted(tests.glob("test_*.py"))
        for name, number in todo_of_tests(path, todos).items()
    }

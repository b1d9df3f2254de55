"""Gradescope's results.json format (tests/autograder/gradescope_results.schema.json), checked for the tests.

jsonschema is imported on the first check, not on collection: its import builds the grammars of its
format checkers, about 1.5 s of CPU, which every test process would pay for tests it may not run.
"""

import functools
import json
from typing import Any

from support import ROOT

SCHEMA_FILE = ROOT / "tests" / "autograder" / "gradescope_results.schema.json"


@functools.cache
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


def problem(document: Any) -> str:
    """Why `document` is not a results.json Gradescope accepts ("" when it is)."""
    import jsonschema

    try:
        jsonschema.validate(document, schema())
    except jsonschema.ValidationError as error:
        return str(error)
    return ""


def validate(document: Any) -> None:
    """Fail the test, saying why, unless `document` is a results.json Gradescope accepts."""
    found = problem(document)
    assert found == "", f"results.json does not keep Gradescope's format: {found[:2000]}"

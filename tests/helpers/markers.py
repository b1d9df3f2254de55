"""What each marker selects, decided in one place: the test suite's kinds of long work.

A test is marked by the folder it is in and the fixtures it uses (a corpus test is one that reads a
corpus grading, an attack test one that reads an attack grading), or by an explicit mark in its
file (`deployed`, `nbgrader`, `browser`, `gradings`, `release`). Every kind here is long work, so
each also marks the test `slow`: `python -m pytest -m "not slow"` is the fast loop, and `-m corpus`,
`-m attacks`, ... select a kind. The markers' descriptions live in pyproject.toml
(`--strict-markers` refuses any other).
"""

import pytest

# (folder under tests/, "" for any; fixture) -> the marker of a test there that uses the fixture
BY_FIXTURE = {
    ("corpus", "graded"): "corpus",
    ("corpus", "public_runs"): "corpus",
    ("attacks", "gradings"): "attacks",
    ("", "reference_result"): "gradings",
    ("", "stub_result"): "gradings",
    ("autograder", "roster_gradings"): "gradings",
    ("autograder", "released"): "release",
}
LONG = ("corpus", "attacks", "deployed", "nbgrader", "browser", "gradings", "release")  # each implies slow


def kinds(item: pytest.Item) -> list[str]:
    """The markers a collected test gets from its folder and its fixtures."""
    parts = item.path.parts
    folder = parts[parts.index("tests") + 1] if "tests" in parts[:-1] else ""
    fixtures = getattr(item, "fixturenames", ())
    found = {marker for (where, fixture), marker in BY_FIXTURE.items() if where in ("", folder) and fixture in fixtures}
    return sorted(found)


@pytest.hookimpl(tryfirst=True)  # before -m deselects anything
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for marker in kinds(item):
            item.add_marker(marker)
        if any(item.get_closest_marker(kind) for kind in LONG) and not item.get_closest_marker("slow"):
            item.add_marker("slow")

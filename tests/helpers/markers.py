"""What each marker selects, decided in one place: the test suite's kinds of long work.

A test is marked by the folder it is in and the fixtures it uses (a corpus test is one that reads a
corpus grading, an attack test one that reads an attack grading), or by an explicit mark in its
file (`deployed`, `nbgrader`, `browser`, `gradings`, `release`). Every kind here is long work, so
each also marks the test `slow`: `python -m pytest -m "not slow"` is the fast loop, and `-m corpus`,
`-m attacks`, ... select a kind. The markers' descriptions live in pyproject.toml
(`--strict-markers` refuses any other).

It also decides the order the modules run in: the most long work first (`heaviest_first`), so that
under xdist's `--dist loadscope` the last modules to start are quick ones and no process is left with
an hour's module while the other has nothing to do.
"""

from collections import Counter

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


def heaviest_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """The items, whole modules at a time, those with the most slow tests first, then those with the most tests.

    A module keeps its tests together and in their order (its module-scoped gradings run once). The
    count of slow tests stands in for a module's time: every long kind of work is marked slow, and a
    fresh clone, where the suite must be fast, has no timings of an earlier run to go by.
    """
    slow = Counter(item.path for item in items if item.get_closest_marker("slow"))
    tests = Counter(item.path for item in items)
    first_seen = {path: index for index, path in enumerate(dict.fromkeys(item.path for item in items))}
    return sorted(items, key=lambda item: (-slow[item.path], -tests[item.path], first_seen[item.path]))


@pytest.hookimpl(tryfirst=True)  # before -m deselects anything
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for marker in kinds(item):
            item.add_marker(marker)
        if any(item.get_closest_marker(kind) for kind in LONG) and not item.get_closest_marker("slow"):
            item.add_marker("slow")
    items[:] = heaviest_first(items)

"""A similarity run: read the roster and the known sources, compare them, and say what could not be read."""

from dataclasses import dataclass, replace
from pathlib import Path

from autograder import rubric
from autograder.locations import SOLUTIONS
from autograder.similarity.compare import compare
from autograder.similarity.extract import SOLUTIONS_LABEL, Week, Work, authors_of, holds_modules, read_work
from autograder.similarity.records import AuthorKind, Similarity


@dataclass(frozen=True)
class Run:
    """What a run found, and the modules it could not read ("alice: recurrence.py: SyntaxError: ...")."""

    similarity: Similarity
    unread: tuple[str, ...]


def run(roster: Path, known: list[Path], solutions: Path = SOLUTIONS) -> Run:
    """Compare every student of ROSTER with one another and with the known sources (the reference first)."""
    limits = rubric.load().limits
    week = Week.load(limits.similarity_kb * 1024, limits.similarity_nodes, solutions)
    students = [read_work(folder, folder.name, AuthorKind.STUDENT, "", week) for folder in authors_of(roster)]
    sources = [read_work(solutions, SOLUTIONS_LABEL, AuthorKind.KNOWN, SOLUTIONS_LABEL, week)]
    for folder in known:
        sources += known_source(folder, week)
    sources = distinct(sources, {work.author.key for work in students})
    unread = tuple(f"{work.author.key}: {why}" for work in students + sources for why in work.unread)
    return Run(compare(students, sources), unread)


def known_source(folder: Path, week: Week) -> list[Work]:
    """A --known folder, labelled by its name: one submission (exercises/ or the modules), or a roster of them."""
    label = folder.resolve().name
    if holds_modules(folder, week):
        return [read_work(folder, label, AuthorKind.KNOWN, label, week)]
    return [read_work(path, f"{label}/{path.name}", AuthorKind.KNOWN, label, week) for path in authors_of(folder)]


def distinct(sources: list[Work], taken: set[str]) -> list[Work]:
    """The known authors, each key apart from the students' and the others' ("solutions (2)" for a second)."""
    kept = []
    for work in sources:
        key, count = work.author.key, 1
        while key in taken:
            count += 1
            key = f"{work.author.key} ({count})"
        taken.add(key)
        kept.append(replace(work, author=replace(work.author, key=key)))
    return kept

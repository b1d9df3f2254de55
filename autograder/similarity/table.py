"""similarity.csv: one row per pair of students, then one per student close to a known source.

Columns: `kind` (`pair` or `known`), `a` (a student), `b` (the other student, or the known source's
author: `solutions`, `LABEL/NAME`), `source` (the known source's label; empty for a pair), `score`,
then one column per function compared (empty where the two share nothing in it). Every name is one
printable line, and no cell can be read by a spreadsheet as a formula.
"""

import csv
from pathlib import Path

from autograder.similarity.records import FunctionMatch, Similarity
from autograder.text import escaped, number, spreadsheet

FIRST = ["kind", "a", "b", "source", "score"]


def _name(text: str) -> str:
    return spreadsheet(escaped(text))


def columns(similarity: Similarity) -> list[str]:
    """Every function a row scores, sorted: the CSV's columns after FIRST."""
    rows = [*similarity.pairs, *similarity.known]
    return sorted({match.function for row in rows for match in row.functions})


def _scores(functions: tuple[FunctionMatch, ...], names: list[str]) -> list[str]:
    scores = {match.function: match.score for match in functions}
    return [number(scores.get(function), places=4) for function in names]


def rows(similarity: Similarity) -> list[list[str]]:
    """The header, the pairs in the run's order (highest first), then the known matches."""
    names = columns(similarity)
    table = [FIRST + [_name(function) for function in names]]
    for pair in similarity.pairs:
        table.append(["pair", _name(pair.a), _name(pair.b), "", number(pair.score, places=4)])
        table[-1] += _scores(pair.functions, names)
    for match in similarity.known:
        first = ["known", _name(match.student), _name(match.author), _name(match.source)]
        table.append([*first, number(match.score, places=4), *_scores(match.functions, names)])
    return table


def write_csv(similarity: Similarity, path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows(similarity))

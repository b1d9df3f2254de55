"""The files a similarity run writes into OUT: similarity.json (the data), similarity.csv and similarity.html."""

import json
from pathlib import Path

from autograder.similarity import page, table
from autograder.similarity.records import FunctionMatch, Similarity
from autograder.text import valid

JSON_NAME, CSV_NAME, PAGE_NAME = "similarity.json", "similarity.csv", "similarity.html"


def write_outputs(similarity: Similarity, out: Path, source: str = "") -> list[Path]:
    """Write every file of the run into OUT (made if missing); return their paths. `source` names the
    roster compared, on the page."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / JSON_NAME, out / CSV_NAME, out / PAGE_NAME]
    paths[0].write_text(json.dumps(as_json(similarity), indent=1) + "\n", encoding="utf-8")
    table.write_csv(similarity, paths[1])
    paths[2].write_text(valid(page.page(similarity, source)), encoding="utf-8")
    return paths


def as_json(similarity: Similarity) -> dict:
    """The run as similarity.json's document: pairs, known and clusters, as the issue states them, and `cut`:
    each function compared in part (`author`, `function`, `compared` of `characters`)."""
    return {
        "pairs": [_pair(p.a, p.b, p.score, p.functions) for p in similarity.pairs],
        "known": [_known(k) for k in similarity.known],
        "clusters": [list(cluster) for cluster in similarity.clusters],
        "cut": [
            {"author": c.author, "function": c.function, "compared": c.compared, "characters": c.length}
            for c in similarity.cut
        ],
    }


def _pair(a: str, b: str, score: float, functions: tuple[FunctionMatch, ...]) -> dict:
    return {"a": a, "b": b, "score": round(score, 4), "functions": _functions(functions)}


def _known(match) -> dict:
    entry = {"student": match.student, "source": match.source, "author": match.author}
    return entry | {"score": round(match.score, 4), "functions": _functions(match.functions)}


def _functions(functions: tuple[FunctionMatch, ...]) -> dict[str, float]:
    return {f.function: round(f.score, 4) for f in functions}

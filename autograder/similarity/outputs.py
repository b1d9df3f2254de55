"""The files a similarity run writes into OUT: similarity.json (the data; csv and html follow it)."""

import json
from pathlib import Path

from autograder.similarity.records import FunctionMatch, Similarity

JSON_NAME = "similarity.json"


def write_outputs(similarity: Similarity, out: Path) -> list[Path]:
    """Write every file of the run into OUT (made if missing); return their paths."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / JSON_NAME
    path.write_text(json.dumps(as_json(similarity), indent=1) + "\n", encoding="utf-8")
    return [path]


def as_json(similarity: Similarity) -> dict:
    """The run as similarity.json's document: pairs, known and clusters, as the issue states them."""
    return {
        "pairs": [_pair(p.a, p.b, p.score, p.functions) for p in similarity.pairs],
        "known": [_known(k) for k in similarity.known],
        "clusters": [list(cluster) for cluster in similarity.clusters],
    }


def _pair(a: str, b: str, score: float, functions: tuple[FunctionMatch, ...]) -> dict:
    return {"a": a, "b": b, "score": round(score, 4), "functions": _functions(functions)}


def _known(match) -> dict:
    entry = {"student": match.student, "source": match.source, "author": match.author}
    return entry | {"score": round(match.score, 4), "functions": _functions(match.functions)}


def _functions(functions: tuple[FunctionMatch, ...]) -> dict[str, float]:
    return {f.function: round(f.score, 4) for f in functions}

"""bench_similarity.py --compare-methods: the similarity corpus through ast (ours), copydetect and tree-sitter."""

import tempfile
from collections.abc import Callable
from pathlib import Path

from similarity_corpus import MODULES, students, write_roster

from autograder.locations import EXERCISES
from autograder.similarity import run

SEVERAL = 3  # a pair's score for the per-module methods: the mean of its best three modules, as ours does functions
K_NODES = 12  # tree-sitter: k-grams of this many node kinds


def best_mean(scores: list[float]) -> float:
    return sum(sorted(scores, reverse=True)[:SEVERAL]) / SEVERAL


def ours(roster: Path, names: list[str]) -> dict[frozenset, float]:
    return {frozenset((pair.a, pair.b)): pair.score for pair in run.run(roster, []).similarity.pairs}


def per_module(prints: Callable[[Path, set], set]) -> Callable[[Path, list[str]], dict[frozenset, float]]:
    """A method that fingerprints each module (the stub's prints removed) and scores a pair by its best modules."""

    def method(roster: Path, names: list[str]) -> dict[frozenset, float]:
        stub = {module: prints(EXERCISES / f"{module}.py", set()) for module in MODULES}
        held = {(name, m): prints(roster / name / "exercises" / f"{m}.py", stub[m]) for name in names for m in MODULES}
        scores = {}
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                modules = [_similarity(held[a, m], held[b, m]) for m in MODULES]
                scores[frozenset((a, b))] = best_mean(modules)
        return scores

    return method


def _similarity(a: set, b: set) -> float:
    """copydetect's score of two files: the mean of the shares of each one's prints the other holds."""
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return (shared / len(a) + shared / len(b)) / 2


def copydetect_prints(path: Path, boilerplate: set) -> set:
    """copydetect 0.5.0 with its defaults (noise and guarantee thresholds 25: k=25, window 1)."""
    import numpy as np
    from copydetect import CodeFingerprint

    fingerprint = CodeFingerprint(str(path), 25, 1, boilerplate=np.array(sorted(boilerplate), dtype=np.int64))
    return set(fingerprint.hashes)


def tree_sitter_prints(path: Path, boilerplate: set) -> set:
    """k-grams of tree-sitter-python's node kinds in preorder, names and literals abstracted, comments and
    docstrings left out."""
    import tree_sitter_python
    from tree_sitter import Language, Parser

    parser = Parser(Language(tree_sitter_python.language()))
    kinds: list[str] = []

    def visit(node) -> None:
        if node.type == "comment" or (node.type == "expression_statement" and node.child(0).type == "string"):
            return
        kinds.append(node.type)
        for child in node.children:
            visit(child)

    visit(parser.parse(path.read_bytes()).root_node)
    return {hash(tuple(kinds[i : i + K_NODES])) for i in range(len(kinds) - K_NODES + 1)} - boilerplate


METHODS = {"ast": ours, "copydetect": per_module(copydetect_prints), "tree-sitter": per_module(tree_sitter_prints)}


def compare_methods() -> None:
    everyone = students()
    names = [student.name for student in everyone]
    copies = {frozenset((s.name, source)): s for s in everyone for source in s.copies if source != "solutions"}
    with tempfile.TemporaryDirectory() as scratch:
        roster = write_roster(Path(scratch), EXERCISES)
        results = {label: method(roster, names) for label, method in METHODS.items()}
    print(f"{len(names)} students, {len(copies)} copy pairs, {len(names) * (len(names) - 1) // 2} pairs")
    print(f"{'copy pair (disguise)':58}" + "".join(f"{label:>22}" for label in METHODS))
    found = dict.fromkeys(METHODS, 0)
    for pair, student in copies.items():
        cells = []
        for label, scores in results.items():
            ranked = sorted(scores.values(), reverse=True)
            best_other = max(score for key, score in scores.items() if key not in copies)
            found[label] += scores[pair] > best_other
            missed = "" if scores[pair] > best_other else " MISSED"
            cells.append(f"{scores[pair]:.2f} #{ranked.index(scores[pair]) + 1}{missed:>7}")
        print(
            f"{' - '.join(sorted(pair)) + ' (' + student.disguise[:30] + ')':58}"
            + "".join(f"{cell:>22}" for cell in cells)
        )
    best = {label: max(s for key, s in scores.items() if key not in copies) for label, scores in results.items()}
    print(f"{'closest pair that is not a copy':58}" + "".join(f"{best[label]:>22.2f}" for label in METHODS))
    print(
        f"{'copies above every other pair':58}" + "".join(f"{found[label]:>19} of {len(copies)}" for label in METHODS)
    )

"""`autograde similarity` on a large roster, and the choice of its method, measured.

    python benchmarks/bench_similarity.py [--students 1000]     # time and memory of a whole run
    python benchmarks/bench_similarity.py --compare-methods     # the corpus through three methods

Scale: a synthetic roster of --students forks built from the similarity corpus's modules (each module of
each student drawn from the correct variants, the modules written for the corpus and the disguised
copies), every one mutated as a copier would: every local name renamed, the layout rewritten by
`ast.unparse`, one module in three with an unused helper. A third of the students copy another one's
module as it is (so the pairs are not all alike). Timed: `similarity.run.run` (read, parse, fingerprint,
compare, spans) and `outputs.write_outputs`, one process, on this machine; peak memory from getrusage.

Methods (--compare-methods): the similarity corpus (tests/corpus/similarity/roster.toml) compared by
  ast          ours: normalised `ast` subtrees, per TODO function, weighted by rarity (autograder/similarity);
  copydetect   copydetect==0.5.0 as its users run it: per module, the released stubs as boilerplate;
  tree-sitter  tree-sitter-python==0.25.0's tree, per module: k-grams of node kinds (names abstracted),
               the stubs' k-grams removed;
each pair's score for the two others is the mean of its best three modules' (as ours is of its best three
functions). Printed per disguise: the copy pair's score and rank among all pairs, against the closest
pair that is not a copy; a copy found is one that ranks above every pair that is not. copydetect and
tree-sitter are not dependencies of the grader: `pip install -e '.[similarity-methods]'` (copydetect==0.5.0,
tree-sitter==0.25.0, tree-sitter-python==0.25.0) to run this part.
"""

import argparse
import ast
import os
import platform
import random
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "helpers")]

from similarity_corpus import MODULES, students  # noqa: E402

from autograder.locations import EXERCISES  # noqa: E402
from autograder.similarity import outputs, run  # noqa: E402
from autograder.similarity.fingerprints import BUILTINS  # noqa: E402

SEVERAL = 3


class Renamer(ast.NodeTransformer):
    """Every name the module binds itself renamed (imports and builtins kept): a copier's first disguise."""

    def __init__(self, keep: set[str], salt: str) -> None:
        self.keep, self.salt = keep, salt

    def _new(self, name: str) -> str:
        return name if name in self.keep or name in BUILTINS or name == "self" else f"{name}_{self.salt}"

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self._new(node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.arg = self._new(node.arg)
        return node


def mutated(source: str, rng: random.Random) -> str:
    """A module renamed and re-laid out, sometimes with an unused helper."""
    tree = ast.parse(source)
    keep = {
        alias.asname or alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    keep |= {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    text = ast.unparse(Renamer(keep, rng.choice("abcdefghijk") + str(rng.randrange(100))).visit(tree))
    if rng.random() < 1 / 3:
        text += (
            f"\n\n\ndef _unused_{rng.randrange(1000)}(values):\n    return [v * {rng.randrange(9)} for v in values]\n"
        )
    return text


def synthetic_roster(target: Path, count: int, seed: int = 7) -> Path:
    """COUNT forks of mutated corpus modules, a third of them copying another fork's module."""
    rng = random.Random(seed)
    pool: dict[str, list[str]] = {module: [] for module in MODULES}
    for student in students():
        for module, path in student.modules.items():
            pool[module].append(path.read_text(encoding="utf-8"))
    made: list[Path] = []
    for index in range(count):
        folder = target / f"student{index:04d}" / "exercises"
        shutil.copytree(EXERCISES, folder, ignore=shutil.ignore_patterns("tests", "__pycache__"))
        for module in MODULES:
            if made and rng.random() < 1 / 3 / len(MODULES):
                shutil.copy(rng.choice(made) / f"{module}.py", folder / f"{module}.py")
            elif rng.random() < 0.9:
                (folder / f"{module}.py").write_text(mutated(rng.choice(pool[module]), rng), encoding="utf-8")
        made.append(folder)
    return target


def scale(count: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        roster = synthetic_roster(Path(scratch) / "roster", count)
        start = time.perf_counter()
        found = run.run(roster, [])
        written = outputs.write_outputs(found.similarity, Path(scratch) / "out")
        seconds = time.perf_counter() - start
        size = sum(path.stat().st_size for path in written)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    similarity = found.similarity
    cores = len(os.sched_getaffinity(0))
    print(f"{time.strftime('%Y-%m-%d')} · {platform.machine()}, {cores} cores, Python {platform.python_version()}")
    print(
        f"{count} students: {seconds:.1f} s (one process), peak memory {peak:.0f} MiB; {len(similarity.pairs)} "
        f"pairs kept, {len(similarity.known)} known matches, {len(similarity.clusters)} clusters; "
        f"files {size / 1e6:.1f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=1000)
    parser.add_argument(
        "--compare-methods", action="store_true", help="the corpus through ast, copydetect, tree-sitter"
    )
    args = parser.parse_args()
    if args.compare_methods:
        from bench_similarity_methods import compare_methods

        compare_methods()
    else:
        scale(args.students)


if __name__ == "__main__":
    main()

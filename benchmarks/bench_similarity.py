"""`autograde similarity` on a large roster, and the choice of its method, measured.

    python benchmarks/bench_similarity.py [--students 1000]     # time and memory of a whole run
    python benchmarks/bench_similarity.py --compare-methods     # the corpus through three methods
    python benchmarks/bench_similarity.py --long-line           # a one-line helper, in ASCII and not (issue 45)

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

Long line (--long-line): a roster of four, three with the reference's padding.py and mallory, whose
gather_final calls a one-line helper making her padding.py 64, 128 and 255 KB (tests/helpers/similarity_attacks.py),
once in ASCII and once with one `é` on the line. Timed: the CPU of `similarity.run.run` (process time, the best
of REPEATS); printed: each size's two times and their ratio (1.0: the character costs nothing), and how much of
mallory's TODO was compared.
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

from similarity_attacks import long_line  # noqa: E402
from similarity_corpus import MODULES, students  # noqa: E402

from autograder.locations import EXERCISES, SOLUTIONS  # noqa: E402
from autograder.similarity import outputs, run  # noqa: E402
from autograder.similarity.fingerprints import BUILTINS  # noqa: E402

SEVERAL = 3
REPEATS = 3  # runs of each roster of --long-line, the best kept: the machine is shared


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
        for module in student.modules:
            pool[module].append(student.source(module, EXERCISES))
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


def long_line_roster(target: Path, size: int, character: str) -> Path:
    """alice, bob and carol with the reference's padding.py; mallory's of `size` bytes, one line of it her helper."""
    for name in ("alice", "bob", "carol", "mallory"):
        folder = target / name / "exercises"
        shutil.copytree(EXERCISES, folder, ignore=shutil.ignore_patterns("tests", "__pycache__"))
        shutil.copy(SOLUTIONS / "padding.py", folder / "padding.py")
    (target / "mallory" / "exercises" / "padding.py").write_text(long_line(size, character), encoding="utf-8")
    return target


def long_lines(sizes: tuple[int, ...] = (64, 128, 255)) -> None:
    print(f"{time.strftime('%Y-%m-%d')} · {platform.machine()}, Python {platform.python_version()}: CPU of run.run")
    print(f"{'module':>8} {'ASCII':>8} {'one é':>8} {'ratio':>6}  mallory's gather_final compared")
    with tempfile.TemporaryDirectory() as scratch:  # once untimed: the imports and the caches of a first run
        run.run(long_line_roster(Path(scratch), 4096, "a"), [])
    for size in sizes:
        seconds, cut = {}, None
        for character in ("a", "é"):
            with tempfile.TemporaryDirectory() as scratch:
                roster = long_line_roster(Path(scratch), size * 1024, character)
                times = []
                for _ in range(REPEATS):
                    start = time.process_time()
                    found = run.run(roster, [])
                    times.append(time.process_time() - start)
                seconds[character], cut = min(times), found.similarity.cut
        compared = ", ".join(f"{c.compared:,} of {c.length:,} characters" for c in cut) or "all of it"
        ratio = seconds["é"] / seconds["a"]
        print(f"{size:>5} KB {seconds['a']:>6.2f} s {seconds['é']:>6.2f} s {ratio:>5.2f}x  {compared}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=1000)
    parser.add_argument(
        "--compare-methods", action="store_true", help="the corpus through ast, copydetect, tree-sitter"
    )
    parser.add_argument("--long-line", action="store_true", help="a one-line helper, in ASCII and with one é")
    args = parser.parse_args()
    if args.long_line:
        long_lines()
    elif args.compare_methods:
        from bench_similarity_methods import compare_methods

        compare_methods()
    else:
        scale(args.students)


if __name__ == "__main__":
    main()

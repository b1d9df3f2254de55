"""The comparison: every pair of students, function by function, weighted by how rare what they share is.

For one function, two authors' score is the weight of the fingerprints they share over the number the
shorter of the two has (so dead code, an unused helper or a copy padded out does not dilute it). A
fingerprint weighs log(1 + N/df) / log(1 + N/2), N the students who wrote the function and df those
whose code holds it (1 for a passage only the two of them share). As MOSS's `-m`: what most of the
class writes alike weighs little, and what more than `COMMON_SHARE` of them write weighs nothing.
A pair's score is the mean of its `SEVERAL` best functions: one short function written alike is not
enough, rare passages shared across several are.
The students are compared by blocks of rows of sparse matrix products: memory grows with the block,
never with the square of the roster, and each fingerprint is touched once per pair that shares it.
"""

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy import sparse

from autograder.similarity.extract import Work
from autograder.similarity.records import FunctionMatch, KnownMatch, Pair, Similarity, Span

SEVERAL = 3  # a pair's score: the mean of its best SEVERAL functions
COMMON_SHARE = 0.5  # a fingerprint more than this share of the students hold weighs nothing (from 4 students up)
MIN_PRINTS = 4  # a function's score is over at least this many fingerprints: a near-empty one proves nothing
CLOSE = 0.3  # a pair (or a student and a known source) this close is one to look at: known matches, clusters
ALL_PAIRS_UP_TO = 100  # students: up to this many, every pair is listed; beyond, the best MAX_PAIRS
MAX_PAIRS = 1000
ROWS = 256  # students per block of the comparison (memory: functions x ROWS x students scores)


@dataclass(frozen=True)
class Table:
    """One function across the students: who holds which fingerprint, and what each weighs."""

    function: str
    columns: dict[int, int]  # fingerprint -> column
    held: sparse.csr_matrix  # students x fingerprints, 1 where a student's code holds it
    weights: np.ndarray  # per column
    counts: np.ndarray  # per student: fingerprints of the function (0: not written)

    @classmethod
    def of(cls, function: str, works: list[Work]) -> "Table":
        columns: dict[int, int] = {}
        rows, cols = [], []
        for row, work in enumerate(works):
            for digest in work.prints.get(function, {}):
                rows.append(row)
                cols.append(columns.setdefault(digest, len(columns)))
        held = sparse.csr_matrix((np.ones(len(rows), np.float32), (rows, cols)), shape=(len(works), len(columns)))
        counts = np.asarray(held.sum(axis=1)).ravel()
        return cls(
            function, columns, held, _weights(np.asarray(held.sum(axis=0)).ravel(), int((counts > 0).sum())), counts
        )

    def vectors(self, works: list[Work]) -> tuple[sparse.csr_matrix, np.ndarray]:
        """Other authors' (the known sources') fingerprints of this function, in this table's columns."""
        rows, cols = [], []
        counts = np.zeros(len(works), np.float32)
        for row, work in enumerate(works):
            prints = work.prints.get(self.function, {})
            counts[row] = len(prints)
            for digest in prints:
                if digest in self.columns:
                    rows.append(row)
                    cols.append(self.columns[digest])
        shape = (len(works), len(self.columns))
        return sparse.csr_matrix((np.ones(len(rows), np.float32), (rows, cols)), shape=shape), counts

    def scores(self, rows: sparse.csr_matrix, row_counts: np.ndarray) -> np.ndarray:
        """Each of `rows` against each student: the weight shared over the shorter one's fingerprints."""
        shared = (rows.multiply(self.weights[None, :]).tocsr() @ self.held.T).toarray()
        shorter = np.minimum(row_counts[:, None], self.counts[None, :])
        return np.where(shorter > 0, shared / np.maximum(shorter, MIN_PRINTS), 0.0).astype(np.float32)


def _weights(df: np.ndarray, writers: int) -> np.ndarray:
    """log(1 + N/df) / log(1 + N/2), at most 1; nothing for what more than COMMON_SHARE of N hold (N of 4 or more)."""
    n = max(writers, 2)
    weights = np.minimum(np.log1p(n / np.maximum(df, 1)) / math.log1p(n / 2), 1.0)
    if n >= 4:
        weights[df > COMMON_SHARE * n] = 0.0
    return weights.astype(np.float32)


def combine(per_function: np.ndarray) -> np.ndarray:
    """Pair scores from function scores (functions x ...): the mean of the SEVERAL best."""
    several = min(SEVERAL, per_function.shape[0])
    best = -np.partition(-per_function, several - 1, axis=0)[:several]
    return best.sum(axis=0) / SEVERAL


def compare(students: list[Work], known: list[Work]) -> Similarity:
    """The whole run: pairs ranked, students close to a known source, clusters of three or more, what was cut."""
    functions = sorted({function for work in students + known for function in work.author.functions})
    tables = [Table.of(function, students) for function in functions]
    pairs = [_pair(students[a], students[b], score, tables) for a, b, score in _best_pairs(tables, len(students))]
    known_matches = _known(students, known, tables)
    named = {pair.a for pair in pairs} | {pair.b for pair in pairs}
    named |= {match.student for match in known_matches} | {match.author for match in known_matches}
    authors = {work.author.key: work.author for work in students + known if work.author.key in named}
    cut = tuple(replace(cut, author=work.author.key) for work in students + known for cut in work.cut)  # its final key
    return Similarity(tuple(pairs), tuple(known_matches), _clusters(pairs), authors, cut)


def _best_pairs(tables: list[Table], n: int) -> list[tuple[int, int, float]]:
    """(a, b, score) of the pairs kept, highest first: all of them, or the best MAX_PAIRS of a large roster."""
    keep = n * (n - 1) // 2 if n <= ALL_PAIRS_UP_TO else MAX_PAIRS
    best: list[tuple[float, int, int]] = []
    for start in range(0, n, ROWS):
        block = range(start, min(start + ROWS, n))
        scores = combine(np.stack([t.scores(t.held[block.start : block.stop], t.counts[block]) for t in tables]))
        rows, cols = np.nonzero(np.triu(np.ones_like(scores, dtype=bool), k=start + 1))
        values = scores[rows, cols]
        if len(values) > keep:
            chosen = np.argpartition(-values, keep - 1)[:keep]
            rows, cols, values = rows[chosen], cols[chosen], values[chosen]
        best += [(float(v), int(r) + start, int(c)) for v, r, c in zip(values, rows, cols, strict=True)]
        best = sorted(best, key=lambda item: (-item[0], item[1], item[2]))[:keep]
    return [(a, b, score) for score, a, b in best]


def _known(students: list[Work], known: list[Work], tables: list[Table]) -> list[KnownMatch]:
    """Each student close to a known source's author, closest first (the sources compared by blocks too)."""
    matches = []
    for start in range(0, len(known) if students else 0, ROWS):
        block = known[start : start + ROWS]
        scores = combine(np.stack([table.scores(*table.vectors(block)) for table in tables]))
        for k, s in zip(*np.nonzero(scores >= CLOSE), strict=True):
            source = block[k].author
            functions = _functions(students[s], block[k], tables)
            matches.append(KnownMatch(students[s].author.key, source.label, source.key, float(scores[k, s]), functions))
    return sorted(matches, key=lambda match: (-match.score, match.student, match.author))


def _pair(a: Work, b: Work, score: float, tables: list[Table]) -> Pair:
    return Pair(a.author.key, b.author.key, score, _functions(a, b, tables))


def _functions(a: Work, b: Work, tables: list[Table]) -> tuple[FunctionMatch, ...]:
    """What two authors share in each function both wrote: its score and the passages, on each side."""
    matches = []
    for table in tables:
        prints_a, prints_b = a.prints.get(table.function), b.prints.get(table.function)
        if not prints_a or not prints_b:
            continue
        shared = [
            d for d in prints_a.keys() & prints_b.keys() if d in table.columns and table.weights[table.columns[d]] > 0
        ]
        weight = sum(float(table.weights[table.columns[d]]) for d in shared)
        score = weight / max(min(len(prints_a), len(prints_b)), MIN_PRINTS)
        spans_a, spans_b = merged(prints_a, shared), merged(prints_b, shared)
        matches.append(FunctionMatch(table.function, min(score, 1.0), spans_a, spans_b))
    return tuple(matches)


def merged(prints: dict[int, tuple[Span, ...]], shared: list[int]) -> tuple[Span, ...]:
    """The passages of the shared fingerprints, overlapping ones joined, in order."""
    spans = sorted((span.start, span.end) for digest in shared for span in prints[digest])
    joined: list[list[int]] = []
    for start, end in spans:
        if joined and start <= joined[-1][1]:
            joined[-1][1] = max(joined[-1][1], end)
        else:
            joined.append([start, end])
    return tuple(Span(start, end) for start, end in joined)


def _clusters(pairs: list[Pair]) -> tuple[tuple[str, ...], ...]:
    """Groups of three or more students who share one function's passages (joined through one another)."""
    groups: set[tuple[str, ...]] = set()
    functions = {match.function for pair in pairs for match in pair.functions}
    for function in functions:
        edges = [
            (pair.a, pair.b)
            for pair in pairs
            if pair.score >= CLOSE and any(m.function == function and m.score >= CLOSE for m in pair.functions)
        ]
        groups |= {group for group in _components(edges) if len(group) >= 3}
    return tuple(sorted(groups))


def _components(edges: list[tuple[str, str]]) -> list[tuple[str, ...]]:
    """The connected groups of names an edge list joins, each sorted."""
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent.setdefault(name, name) != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    for a, b in edges:
        parent[root(a)] = root(b)
    groups: dict[str, list[str]] = {}
    for name in parent:
        groups.setdefault(root(name), []).append(name)
    return [tuple(sorted(group)) for group in groups.values()]

"""The comparison: rarity weighs, several functions make a pair close, a large roster keeps its best pairs."""

import random

import pytest

from autograder.similarity import compare
from autograder.similarity.extract import Work
from autograder.similarity.records import Author, AuthorKind, Span

FUNCTIONS = ("m.f", "m.g", "m.h", "m.k")


def work(name: str, prints: dict[str, set[int]], kind: AuthorKind = AuthorKind.STUDENT) -> Work:
    """An author whose functions hold these fingerprints (each shown as one character per print)."""
    texts = {function: "x" * max(digests, default=0) for function, digests in prints.items()}
    spans = {f: {d: (Span(d - 1, d),) for d in digests} for f, digests in prints.items()}
    return Work(Author(name, kind, "known" if kind is AuthorKind.KNOWN else "", texts), spans)


def own(seed: int, size: int = 10) -> dict[str, set[int]]:
    """Code nobody else writes: fingerprints drawn apart for each author."""
    return {
        function: {seed * 1000 + index * 100 + k + 1 for k in range(size)} for index, function in enumerate(FUNCTIONS)
    }


def scores(found) -> dict[frozenset, float]:
    return {frozenset((pair.a, pair.b)): pair.score for pair in found.pairs}


def test_it_weighs_what_most_of_the_class_writes_alike_as_nothing():
    common = {function: set(range(1, 11)) for function in FUNCTIONS}
    everyone = [work(f"s{i}", {f: common[f] | own(i + 1)[f] for f in FUNCTIONS}) for i in range(6)]
    found = compare.compare(everyone, [])
    assert all(pair.score == 0 for pair in found.pairs)


def test_it_finds_a_pair_closer_when_they_share_across_several_functions_than_in_one():
    one = own(1)
    shared_one = {**own(2), "m.f": one["m.f"]}  # one function alike
    shared_three = {**own(3), **{f: one[f] for f in ("m.f", "m.g", "m.h")}}
    found = scores(
        compare.compare(
            [work("a", one), work("b", shared_one), work("c", shared_three)]
            + [work(f"o{i}", own(9 + i)) for i in range(3)],
            [],
        )
    )
    three, one = found[frozenset(("a", "c"))], found[frozenset(("a", "b"))]
    assert three > 0.9 and one <= 1 / compare.SEVERAL and three > 2.5 * one


def test_it_is_not_diluted_by_code_added_to_a_copy():
    padded = {f: digests | {d + 50_000 for d in digests} for f, digests in own(1).items()}
    found = scores(compare.compare([work("a", own(1)), work("b", padded), work("c", own(2))], []))
    assert found[frozenset(("a", "b"))] == pytest.approx(1.0, abs=0.01)


def test_it_compares_by_blocks_with_the_same_result_as_at_once(monkeypatch):
    rng = random.Random(3)
    authors = [work(f"s{i:02d}", {f: set(rng.sample(range(1, 60), 12)) for f in FUNCTIONS}) for i in range(40)]
    whole = compare.compare(authors, [])
    monkeypatch.setattr(compare, "ROWS", 7)
    blocks = compare.compare(authors, [])
    assert scores(blocks) == pytest.approx(scores(whole)) and len(blocks.pairs) == 40 * 39 // 2


def test_it_keeps_only_the_best_pairs_of_a_large_roster(monkeypatch):
    rng = random.Random(5)
    authors = [work(f"s{i:02d}", {f: set(rng.sample(range(1, 60), 12)) for f in FUNCTIONS}) for i in range(40)]
    every = sorted(scores(compare.compare(authors, [])).values(), reverse=True)
    monkeypatch.setattr(compare, "ALL_PAIRS_UP_TO", 30)
    monkeypatch.setattr(compare, "MAX_PAIRS", 25)
    monkeypatch.setattr(compare, "ROWS", 9)
    kept = compare.compare(authors, [])
    assert [pair.score for pair in kept.pairs] == pytest.approx(every[:25])


def test_it_reports_a_student_close_to_a_known_source_and_not_the_others():
    source = work("solutions", own(1), AuthorKind.KNOWN)
    found = compare.compare([work("copier", own(1)), work("other", own(2)), work("third", own(3))], [source])
    assert [(match.student, match.author) for match in found.known] == [("copier", "solutions")]
    assert found.known[0].functions[0].spans_a == found.known[0].functions[0].spans_b != ()


def test_it_joins_overlapping_passages_into_one():
    prints = {1: (Span(0, 10), Span(30, 40)), 2: (Span(5, 20),), 3: (Span(50, 60),)}
    assert compare.merged(prints, [1, 2]) == (Span(0, 20), Span(30, 40))

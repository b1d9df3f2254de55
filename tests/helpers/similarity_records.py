"""Similarity records made by hand: what the page and the csv are tested on, without the engine.

`span_of(text, passage)` finds a passage's offsets, so a test says which words it marks, not numbers.
"""

from autograder.similarity.records import Author, AuthorKind, FunctionMatch, KnownMatch, Pair, Similarity, Span

GATHER = "recurrence.gather_final"
LOSS = "language_model.next_token_loss"

ADA = {
    GATHER: "index = (lengths - 1).clamp(min=0)\nreturn output[torch.arange(B), index]\n",
    LOSS: "logits = logits[:, :-1]\ntargets = tokens[:, 1:]\n"
    "return F.cross_entropy(logits.flatten(0, 1), targets.flatten())\n",
}
BOB = {
    GATHER: "last = (lengths - 1).clamp(min=0)\n# the final state\nreturn output[torch.arange(B), last]\n",
    LOSS: "pred = logits[:, :-1]\ngold = tokens[:, 1:]\nreturn F.cross_entropy(pred.flatten(0, 1), gold.flatten())\n",
}
CAL = {
    GATHER: "rows = []\nfor i in range(B):\n    rows.append(output[i, lengths[i] - 1])\nreturn torch.stack(rows)\n",
    LOSS: "return F.cross_entropy(logits[:, :-1].reshape(-1, V), tokens[:, 1:].reshape(-1))\n",
}


def span_of(text: str, passage: str, occurrence: int = 0) -> Span:
    """The offsets of `passage` in `text` (its `occurrence`-th appearance)."""
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(passage, start + 1)
    return Span(start, start + len(passage))


def student(key: str, functions: dict[str, str]) -> Author:
    return Author(key, AuthorKind.STUDENT, "", functions)


def match(function: str, score: float, first: dict, second: dict, passages: list[tuple[str, str]]) -> FunctionMatch:
    """What two authors share in `function`: each (passage in first, passage in second) marked on both sides."""
    spans_a = tuple(span_of(first[function], mine) for mine, _ in passages)
    spans_b = tuple(span_of(second[function], theirs) for _, theirs in passages)
    return FunctionMatch(function, score, spans_a, spans_b)


def roster(a: str = "ada", b: str = "bob", c: str = "cal") -> Similarity:
    """Three students (named as the caller likes: hostile names too), one of them close to the solutions."""
    solutions = Author("solutions", AuthorKind.KNOWN, "solutions", dict(ADA))
    authors = {a: student(a, ADA), b: student(b, BOB), c: student(c, CAL), "solutions": solutions}
    close = Pair(
        a,
        b,
        0.82,
        (
            match(GATHER, 0.9, ADA, BOB, [("(lengths - 1).clamp(min=0)", "(lengths - 1).clamp(min=0)")]),
            match(LOSS, 0.7, ADA, BOB, [("logits[:, :-1]", "logits[:, :-1]"), ("tokens[:, 1:]", "tokens[:, 1:]")]),
        ),
    )
    far = Pair(a, c, 0.05, (FunctionMatch(GATHER, 0.0, (), ()), FunctionMatch(LOSS, 0.1, (), ())))
    leak = KnownMatch(a, "solutions", "solutions", 1.0, (match(GATHER, 1.0, ADA, ADA, [(ADA[GATHER], ADA[GATHER])]),))
    return Similarity(pairs=(close, far), known=(leak,), clusters=((a, b, c),), authors=authors)

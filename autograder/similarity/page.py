"""similarity.html: the pairs to look at, ranked, each with the two authors' functions side by side.

One self-contained page, as the class report is: no script, no font, nothing fetched (a
Content-Security-Policy in the page forbids every request). Everything an author controls (a
student's folder name, their code) is shown inert: escaped, and characters a reader would not see
(bidi overrides, zero-width marks, control characters) written as escapes. The highlights are the
engine's spans, character offsets into the text shown. The page stays bounded whatever the roster:
the top pairs only, each function's text cut at FUNCTION_CHARS; it says how many it shows of how many.
"""

import unicodedata
from html import escape

import autograder
from autograder.similarity.records import Author, AuthorKind, FunctionMatch, KnownMatch, Pair, Similarity, Span
from autograder.text import CONTROL, UNSEEN, escaped, printable
from autograder.webpage import document, table

TITLE = f"Who wrote alike · {autograder.TITLE}"
PAIRS_SHOWN = 40  # pairs shown side by side, highest first; the rest are in similarity.csv and .json
KNOWN_SHOWN = 40  # students close to a known source shown side by side
CLUSTERS_SHOWN = 100  # clusters listed
FUNCTION_CHARS = 6000  # characters of one author's function shown (the highlights past it are cut too)
POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
NOTHING_CHANGES = (
    "Nothing on this page changes a grade. A high score says where to look, not what happened: read the "
    "two texts, and what each student can tell you about them."
)
STYLE = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d1d1f;
       max-width: 80rem; margin: 0 auto; padding: 1.5rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ccc; }
h3 { margin: 1.6rem 0 .3rem; } h4 { margin: .8rem 0 .2rem; font-size: .95rem; }
table { border-collapse: collapse; width: 100%; margin: .6rem 0; }
th, td { text-align: left; vertical-align: top; padding: .3rem .5rem; border-bottom: 1px solid #e3e3e3; }
td.number, th.number { text-align: right; white-space: nowrap; }
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: .6rem; }
.side h5 { margin: .2rem 0; font-size: .8rem; color: #555; font-weight: normal; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; font-size: .78rem; background: #f5f5f7;
      padding: .4rem; margin: 0; min-height: 1.2rem; }
mark { background: #ffd966; color: inherit; }
.muted { color: #666; } .key { font-size: 1.05rem; }
@media print { body { max-width: none; padding: 0; } .pair { break-inside: avoid; } }
"""


def name(text: str) -> str:
    """A folder's or a source's name as HTML: one printable line, escaped (`<script>` is text)."""
    return escape(escaped(text))


def _visible(segment: str) -> str:
    """A piece of code as HTML: newlines and tabs kept, every other unseen character written as an escape."""
    if segment.isascii() and not CONTROL.search(segment):  # the common case, quickly
        return escape(segment)
    kept = (c if c in "\n\t" or unicodedata.category(c) not in UNSEEN else printable(c) for c in segment)
    return escape("".join(kept))


def merged(spans: tuple[Span, ...], length: int) -> list[tuple[int, int]]:
    """The spans inside [0, length), sorted, overlapping or touching ones joined: one <mark> each."""
    inside = sorted((max(0, s.start), min(length, s.end)) for s in spans if min(length, s.end) > max(0, s.start))
    joined: list[tuple[int, int]] = []
    for start, end in inside:
        if joined and start <= joined[-1][1]:
            joined[-1] = (joined[-1][0], max(end, joined[-1][1]))
        else:
            joined.append((start, end))
    return joined


def highlighted(text: str, spans: tuple[Span, ...]) -> str:
    """`text` as the inside of a <pre>, each matching passage in a <mark>; cut at FUNCTION_CHARS."""
    shown = text[:FUNCTION_CHARS]
    parts, position = [], 0
    for start, end in merged(spans, len(shown)):
        parts += [_visible(shown[position:start]), f"<mark>{_visible(shown[start:end])}</mark>"]
        position = end
    parts.append(_visible(shown[position:]))
    if len(text) > FUNCTION_CHARS:
        parts.append(f'\n<span class="muted">… {len(text) - FUNCTION_CHARS} more characters not shown</span>')
    return "".join(parts)


def _side(author: Author | None, key: str, function: str, spans: tuple[Span, ...]) -> str:
    text = author.functions.get(function) if author else None
    body = '<span class="muted">(no text kept)</span>' if text is None else highlighted(text, spans)
    return f'<div class="side"><h5>{name(key)}</h5><pre>{body}</pre></div>'


def _function(match: FunctionMatch, first: tuple[Author | None, str], second: tuple[Author | None, str]) -> str:
    left = _side(*first, match.function, match.spans_a)
    right = _side(*second, match.function, match.spans_b)
    heading = f"<h4><code>{name(match.function)}</code> {match.score:.2f}</h4>"
    return f'{heading}<div class="sides">{left}{right}</div>'


def _functions(matches: tuple[FunctionMatch, ...], first: tuple, second: tuple) -> str:
    """The functions the two share, highest first; those they share nothing in, named on one line."""
    ranked = sorted(matches, key=lambda match: -match.score)
    shared = [match for match in ranked if match.score > 0 or match.spans_a or match.spans_b]
    rest = [match.function for match in ranked if match not in shared]
    parts = [_function(match, first, second) for match in shared]
    if rest:
        parts.append(f'<p class="muted">Nothing shared in {", ".join(name(one) for one in rest)}.</p>')
    return "".join(parts)


def _pair(rank: int, pair: Pair, authors: dict[str, Author]) -> str:
    heading = f"<h3>{rank}. {name(pair.a)} and {name(pair.b)}: {pair.score:.2f}</h3>"
    sides = (authors.get(pair.a), pair.a), (authors.get(pair.b), pair.b)
    return f'<section class="pair" id="pair-{rank}">{heading}{_functions(pair.functions, *sides)}</section>'


def _known(rank: int, match: KnownMatch, authors: dict[str, Author]) -> str:
    heading = (
        f"<h3>{rank}. {name(match.student)} and {name(match.author)} ({name(match.source)}): {match.score:.2f}</h3>"
    )
    sides = (authors.get(match.student), match.student), (authors.get(match.author), match.author)
    return f'<section class="pair" id="known-{rank}">{heading}{_functions(match.functions, *sides)}</section>'


def _top(functions: tuple[FunctionMatch, ...], count: int = 3) -> str:
    ranked = sorted(functions, key=lambda match: -match.score)[:count]
    return ", ".join(f"<code>{name(match.function)}</code> {match.score:.2f}" for match in ranked if match.score > 0)


def _table(headings: list[str], rows: list[list[str]], table_id: str) -> str:
    return table(headings, rows, table_id, numbers=(0, 3))  # the rank and the score


def _how_many(shown: int, total: int, one: str, many: str) -> str:
    """How many are shown of how many (`one` and `many`: what they are, singular and plural)."""
    if total == 1:
        return f"<p>One {one}.</p>"
    if shown == total:
        return f"<p>All {total} {many}, highest first.</p>"
    return f"<p>The {shown} highest of {total} {many}: the others are in similarity.csv and similarity.json.</p>"


def pairs(similarity: Similarity) -> str:
    if not similarity.pairs:
        return "<p>No pair of students to compare.</p>"
    top = similarity.pairs[:PAIRS_SHOWN]
    rows = [
        [f'<a href="#pair-{rank}">{rank}</a>', name(p.a), name(p.b), f"{p.score:.2f}", _top(p.functions)]
        for rank, p in enumerate(top, 1)
    ]
    table = _table(["", "student", "student", "score", "where most"], rows, "pair-table")
    details = "".join(_pair(rank, p, similarity.authors) for rank, p in enumerate(top, 1))
    return _how_many(len(top), len(similarity.pairs), "pair", "pairs") + table + details


CLOSE = ("student close to a known source", "students close to a known source")


def known(similarity: Similarity) -> str:
    if not similarity.known:
        return "<p>No student close to a known source.</p>"
    top = similarity.known[:KNOWN_SHOWN]
    rows = [
        [f'<a href="#known-{rank}">{rank}</a>', name(k.student), name(k.author), f"{k.score:.2f}", _top(k.functions)]
        for rank, k in enumerate(top, 1)
    ]
    table = _table(["", "student", "known source", "score", "where most"], rows, "known-table")
    details = "".join(_known(rank, k, similarity.authors) for rank, k in enumerate(top, 1))
    return _how_many(len(top), len(similarity.known), *CLOSE) + table + details


def clusters(similarity: Similarity) -> str:
    if not similarity.clusters:
        return "<p>No group of three or more students who share.</p>"
    shown = similarity.clusters[:CLUSTERS_SHOWN]
    items = "".join(f"<li>{', '.join(name(student) for student in cluster)}</li>" for cluster in shown)
    more = (
        f"<p>And {len(similarity.clusters) - len(shown)} more in similarity.json.</p>"
        if shown != similarity.clusters
        else ""
    )
    return f'<ol id="cluster-list">{items}</ol>{more}'


SECTIONS = {
    "pairs": ("Pairs to look at", pairs),
    "known": ("Close to a known source (the reference solutions, --known folders)", known),
    "clusters": ("Groups of three or more who share", clusters),
}


def _of(source: str) -> str:
    return f" of {name(source)}" if source else ""


def page(similarity: Similarity, source: str = "") -> str:
    """The whole page; `source` says which roster was compared (shown under the title)."""
    students = sum(author.kind is AuthorKind.STUDENT for author in similarity.authors.values())
    header = (
        f'<p class="muted">What the students{_of(source)} wrote in the week\'s TODOs, compared function by '
        f"function ({len(similarity.pairs)} pairs, {students} students with code shown). Passages most of the "
        "class writes alike weigh little; the stubs' text is never counted. Highlighted: the passages two "
        f'authors share.</p>\n<p class="key" id="no-grade-changes">{escape(NOTHING_CHANGES)}</p>'
    )
    sections = {key: (title, render(similarity)) for key, (title, render) in SECTIONS.items()}
    return document(TITLE, POLICY, STYLE, header, sections)

"""similarity.html: the pairs to look at, ranked, each with the two authors' functions side by side.

One self-contained page, as the class report is: no script, no font, nothing fetched (a
Content-Security-Policy in the page forbids every request). Everything an author controls (a
student's folder name, their code) is shown inert: escaped, and characters a reader would not see
(bidi overrides, zero-width marks, control characters, variation selectors) written as escapes; in code,
a name holding a character outside printable ASCII (`index\ufe0f`, a Cyrillic `а`) is written with escapes,
marked, and explained under the function (names.py finds them). The highlights are the engine's spans,
character offsets into the text shown. The page stays bounded whatever the roster: the top pairs only,
each function's text cut at FUNCTION_CHARS; it says how many it shows of how many, and which functions
the run compared only in part. Its height stays bounded too (issue 48): each pair's code is folded under
its heading in a <details>, and each list shows its first LISTED entries with the rest folded, which needs
no script. The page's shell (webpage.py) keeps it accessible: landmarks, named tables that scroll sideways
on a phone; the two texts of a function stack one above the other there.
"""

from bisect import bisect_right
from html import escape
from typing import NamedTuple

import autograder
from autograder.similarity import names
from autograder.similarity.records import Author, AuthorKind, Cut, FunctionMatch, KnownMatch, Pair, Similarity, Span
from autograder.text import CONTROL, escaped
from autograder.webpage import document, table

TITLE = f"Who wrote alike · {autograder.TITLE}"
PAIRS_SHOWN = 40  # pairs shown side by side, highest first; the rest are in similarity.csv and .json
LISTED = 10  # pairs (students close to a known source, groups, cut functions) listed before the rest are folded
KNOWN_SHOWN = 40  # students close to a known source shown side by side
CLUSTERS_SHOWN = 100  # clusters listed
FUNCTION_CHARS = 6000  # characters of one author's function shown (the highlights past it are cut too)
ODD_NAMES_SHOWN = 10  # names outside printable ASCII listed in one function's note
POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
NOTHING_CHANGES = (
    "Nothing on this page changes a grade. A high score says where to look, not what happened: read the "
    "two texts, and what each student can tell you about them."
)
STYLE = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d1d1f;
       max-width: 80rem; margin: 0 auto; padding: 1.5rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ccc; }
h3 { margin: 1.2rem 0 .2rem; } .pair > details > summary { color: #1a5fb4; }
details.more { margin: .8rem 0; } details.more > summary { font-weight: 600; }
h4 { margin: .8rem 0 .2rem; font-size: .95rem; }
table { border-collapse: collapse; width: 100%; margin: .6rem 0; }
th, td { text-align: left; vertical-align: top; padding: .3rem .5rem; border-bottom: 1px solid #e3e3e3; }
td.number, th.number { text-align: right; white-space: nowrap; }
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: .6rem; }
@media (max-width: 40rem) { .sides { grid-template-columns: 1fr; } }  /* a phone: one author above the other */
.side h5 { margin: .2rem 0; font-size: .8rem; color: #555; font-weight: normal; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; font-size: .78rem; background: #f5f5f7;
      padding: .4rem; margin: 0; min-height: 1.2rem; }
mark { background: #ffd966; color: inherit; }
.odd-name { outline: 2px solid #c0392b; background: #fde2e0; color: #7b1d12; font-weight: bold; }
.note { font-size: .85rem; border-left: 4px solid #c0392b; padding: .2rem .6rem; margin: .4rem 0; }
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
    return escape("".join(names.escape(c) if names.unseen(c) else c for c in segment))


def _odd_name(name: str) -> str:
    return f'<span class="odd-name">{escape(names.escaped_name(name))}</span>'


def _code(text: str, start: int, end: int, odd: list[tuple[int, int]]) -> str:
    """text[start:end] as HTML, each odd name in it (or its part inside) written with escapes and marked."""
    parts, position = [], start
    for index in range(max(bisect_right(odd, (start,)) - 1, 0), len(odd)):  # from the last name begun before
        first, last = odd[index]
        if first >= end:
            break
        first, last = max(first, start), min(last, end)
        if first < last:
            parts += [_visible(text[position:first]), _odd_name(text[first:last])]
            position = last
    parts.append(_visible(text[position:end]))
    return "".join(parts)


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
    """`text` as the inside of a <pre>, each matching passage in a <mark>, each odd name escaped and marked;
    cut at FUNCTION_CHARS."""
    shown = text[:FUNCTION_CHARS]
    odd = names.odd_names(shown)
    parts, position = [], 0
    for start, end in merged(spans, len(shown)):
        parts += [_code(shown, position, start, odd), f"<mark>{_code(shown, start, end, odd)}</mark>"]
        position = end
    parts.append(_code(shown, position, len(shown), odd))
    if len(text) > FUNCTION_CHARS:
        parts.append(f'\n<span class="muted">… {len(text) - FUNCTION_CHARS} more characters not shown</span>')
    return "".join(parts)


class Side(NamedTuple):
    """One column of a pair: the author (None: no text kept), their key, and their functions compared in part."""

    author: Author | None
    key: str
    cuts: dict[str, Cut]


def _cut_note(cut: Cut | None) -> str:
    if cut is None:
        return ""
    return (
        f'\n<span class="muted">… compared up to here: {cut.length - cut.compared:,} more characters (the rest '
        "of the function and its helpers) not compared</span>"
    )


def _side(side: Side, function: str, spans: tuple[Span, ...]) -> str:
    author, key, cuts = side
    text = author.functions.get(function) if author else None
    body = '<span class="muted">(no text kept)</span>' if text is None else highlighted(text, spans)
    return f'<div class="side"><h5>{name(key)}</h5><pre>{body}{_cut_note(cuts.get(function))}</pre></div>'


def _odd_item(odd: str, keys: list[str]) -> str:
    """One odd name of a note: marked, whose code holds it, and the name Python reads when it differs."""
    normal = names.reads_as(odd)
    reads = f"; Python reads it as <code>{escape(names.escaped_name(normal))}</code>" if normal else ""
    return f"{_odd_name(odd)} ({', '.join(name(key) for key in dict.fromkeys(keys))}{reads})"


def _odd_names_note(function: str, sides: tuple[Side, Side]) -> str:
    """Under a function whose shown code holds odd names: what the escapes mean, and each name (whose, how read)."""
    listed: dict[str, list[str]] = {}
    for author, key, _ in sides:
        text = (author.functions.get(function) or "")[:FUNCTION_CHARS] if author else ""
        for start, end in names.odd_names(text):
            listed.setdefault(text[start:end], []).append(key)
    if not listed:
        return ""
    items = [_odd_item(odd, keys) for odd, keys in list(listed.items())[:ODD_NAMES_SHOWN]]
    more = f" and {len(listed) - ODD_NAMES_SHOWN} more" if len(listed) > ODD_NAMES_SHOWN else ""
    return (
        '<p class="note"><strong>Names written with escapes.</strong> A name marked in red holds characters '
        "outside printable ASCII, written as Python writes them in a string (<code>\\ufe0f</code>): an invisible "
        "one (a variation selector, a Hangul filler) or a letter of another alphabet that looks like a Latin one "
        "(Cyrillic <code>\\u0430</code> for <code>a</code>). Python reads the name as written, not as it looks: "
        f"<code>index\\ufe0f</code> and <code>index</code> are two different names. Here: {', '.join(items)}{more}.</p>"
    )


def _function(match: FunctionMatch, first: Side, second: Side) -> str:
    left = _side(first, match.function, match.spans_a)
    right = _side(second, match.function, match.spans_b)
    heading = f"<h4><code>{name(match.function)}</code> {match.score:.2f}</h4>"
    return f'{heading}<div class="sides">{left}{right}</div>{_odd_names_note(match.function, (first, second))}'


def _functions(matches: tuple[FunctionMatch, ...], first: Side, second: Side) -> str:
    """The functions the two share, highest first; those they share nothing in, named on one line."""
    ranked = sorted(matches, key=lambda match: -match.score)
    shared = [match for match in ranked if match.score > 0 or match.spans_a or match.spans_b]
    rest = [match.function for match in ranked if match not in shared]
    parts = [_function(match, first, second) for match in shared]
    if rest:
        parts.append(f'<p class="muted">Nothing shared in {", ".join(name(one) for one in rest)}.</p>')
    return "".join(parts)


def _sides(similarity: Similarity, *keys: str) -> list[Side]:
    cuts: dict[str, dict[str, Cut]] = {}
    for cut in similarity.cut:
        cuts.setdefault(cut.author, {})[cut.function] = cut
    return [Side(similarity.authors.get(key), key, cuts.get(key, {})) for key in keys]


def _section(anchor: str, heading: str, functions: str) -> str:
    """One pair: its heading, then the two texts folded under it (a page of pairs, not of code, until opened)."""
    return (
        f'<section class="pair" id="{anchor}"><h3>{heading}</h3>'
        f"<details><summary>The code side by side, function by function</summary>{functions}</details></section>"
    )


def _pair(rank: int, pair: Pair, similarity: Similarity) -> str:
    heading = f"{rank}. {name(pair.a)} and {name(pair.b)}: {pair.score:.2f}"
    return _section(f"pair-{rank}", heading, _functions(pair.functions, *_sides(similarity, pair.a, pair.b)))


def _known(rank: int, match: KnownMatch, similarity: Similarity) -> str:
    heading = f"{rank}. {name(match.student)} and {name(match.author)} ({name(match.source)}): {match.score:.2f}"
    sides = _sides(similarity, match.student, match.author)
    return _section(f"known-{rank}", heading, _functions(match.functions, *sides))


def _top(functions: tuple[FunctionMatch, ...], count: int = 3) -> str:
    ranked = sorted(functions, key=lambda match: -match.score)[:count]
    return ", ".join(f"<code>{name(match.function)}</code> {match.score:.2f}" for match in ranked if match.score > 0)


def _table(headings: list[str], rows: list[list[str]], table_id: str, label: str) -> str:
    return table(headings, rows, table_id, (0, 3), label=label)  # the rank and the score


def _folded(first: str, rest: str, summary: str) -> str:
    """`first` shown, `rest` (if any) folded under a line that says what it holds: a page of bounded height
    whatever the roster, with no script (the policy allows none)."""
    return first + (f'<details class="more"><summary>{summary}</summary>{rest}</details>' if rest else "")


def _ranked(rows: list[list[str]], sections: list[str], table_id: str, other: str, what: str) -> str:
    """A ranked table (`other`: who the student is paired with) and its sections, the first LISTED shown, the
    rest folded: their table, their sections. `what` names them: 'Pairs', ranks 1 to 10."""
    headings = ["rank", "student", other, "score", "where most"]
    first = f"{what}, ranks 1 to {len(rows[:LISTED])}"
    shown = _table(headings, rows[:LISTED], table_id, first) + "".join(sections[:LISTED])
    if len(rows) <= LISTED:
        return shown
    rest = f"{what}, ranks {LISTED + 1} to {len(rows)}"
    folded = _table(headings, rows[LISTED:], f"{table_id}-more", rest) + "".join(sections[LISTED:])
    return _folded(shown, folded, rest)


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
    sections = [_pair(rank, p, similarity) for rank, p in enumerate(top, 1)]
    ranked = _ranked(rows, sections, "pair-table", "student", "Pairs")
    return _how_many(len(top), len(similarity.pairs), "pair", "pairs") + ranked


CLOSE = ("student close to a known source", "students close to a known source")


def known(similarity: Similarity) -> str:
    if not similarity.known:
        return "<p>No student close to a known source.</p>"
    top = similarity.known[:KNOWN_SHOWN]
    rows = [
        [f'<a href="#known-{rank}">{rank}</a>', name(k.student), name(k.author), f"{k.score:.2f}", _top(k.functions)]
        for rank, k in enumerate(top, 1)
    ]
    sections = [_known(rank, k, similarity) for rank, k in enumerate(top, 1)]
    ranked = _ranked(rows, sections, "known-table", "known source", "Close to a known source")
    return _how_many(len(top), len(similarity.known), *CLOSE) + ranked


def clusters(similarity: Similarity) -> str:
    if not similarity.clusters:
        return "<p>No group of three or more students who share.</p>"
    shown = similarity.clusters[:CLUSTERS_SHOWN]
    items = [f"<li>{', '.join(name(student) for student in cluster)}</li>" for cluster in shown]
    first = f'<ol id="cluster-list">{"".join(items[:LISTED])}</ol>'
    rest = f'<ol start="{LISTED + 1}">{"".join(items[LISTED:])}</ol>' if items[LISTED:] else ""
    more = (
        f"<p>And {len(similarity.clusters) - len(shown)} more in similarity.json.</p>"
        if shown != similarity.clusters
        else ""
    )
    return _folded(first, rest, f"Groups {LISTED + 1} to {len(shown)}") + more


def cut(similarity: Similarity) -> str:
    """The functions compared only in part: whose, which, and how much of them."""
    rows = [
        [name(c.author), f"<code>{name(c.function)}</code>", f"{c.compared:,} of {c.length:,}"] for c in similarity.cut
    ]
    headings = ["author", "function", "characters compared"]
    first = table(headings, rows[:LISTED], "cut-table", label="Compared in part")
    rest = table(headings, rows[LISTED:], "cut-table-more", label="More compared in part") if rows[LISTED:] else ""
    return (
        "<p>Of one TODO with its helpers, the comparison reads at most <code>[limits] similarity_nodes</code> "
        "syntax nodes (a long answer has a few hundred): the rest of these was not compared, and the side-by-side "
        "text stops where the comparison did. Code that long in one TODO is worth a look.</p>"
        + _folded(first, rest, f"{len(rows) - LISTED} more functions compared in part")
    )


SECTIONS = {
    "pairs": ("Pairs to look at", pairs),
    "known": ("Close to a known source (the reference solutions, --known folders)", known),
    "clusters": ("Groups of three or more who share", clusters),
    "cut": ("Compared in part", cut),
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
    sections = {
        key: (title, render(similarity)) for key, (title, render) in SECTIONS.items() if key != "cut" or similarity.cut
    }
    return document(TITLE, POLICY, STYLE, header, sections)

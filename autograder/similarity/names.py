"""Where shown code says something other than it looks: names outside printable ASCII, and invisible characters.

Python reads `index\ufe0f` (a variation selector after it), `ind\u0435x` (a Cyrillic `е`) or `index\u3164` (a
Hangul filler) as names other than `index`, though a reader sees `index` in each: side by side with the
reference, such code reads like it and is not. So the page writes every character outside printable
ASCII in a name as Python's escape, and characters nobody sees (bidi controls, zero-width marks, variation
selectors, fillers, spaces other than the space) as escapes wherever they are. Letters of any alphabet in a
comment or a string are shown as written: there they name nothing.

The names are found by a light scan, not a parse (the text shown may be cut anywhere): comments and string
literals are skipped, an f-string's replacement fields are code; outside them, a character outside ASCII
can only be part of a name. Linear in the text.
"""

import re
import unicodedata

from autograder.text import UNSEEN

# Default-ignorable code points that are not format characters (those are in UNSEEN), and the spaces other
# than U+0020: a reader sees nothing, or a plain space, where Python reads a character.
INVISIBLE = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2065\u3164\ufe00-\ufe0f\uffa0\ufff0-\ufff8\U000e0000-\U000e0fff"
    "\u00a0\u1680\u2000-\u200a\u202f\u205f\u2800\u3000]"
)
START = re.compile(
    r"(?P<comment>#)|(?P<prefix>[rRbBuUfF]{0,2})(?P<quote>'''|\"\"\"|'|\")|(?P<name>(?:\w|[^\x00-\x7f])+)"
)
NON_ASCII = re.compile(r"[^\x00-\x7f]")
LINE_END = re.compile(r"\n")
FIELD = re.compile(r"\{\{|\}\}|\{|\}")  # in an f-string: doubled braces are text, single ones open and close code
ENDS = {quote: re.compile(r"\\(?:.|\n)|" + quote + ("|\n" if len(quote) == 1 else "")) for quote in ("'", '"')}
ENDS |= {quote * 3: re.compile(r"\\(?:.|\n)|" + quote * 3) for quote in ("'", '"')}


def unseen(character: str) -> bool:
    """Whether a reader would not see `character` as itself (a newline and a tab are seen)."""
    if character in "\n\t":
        return False
    return unicodedata.category(character) in UNSEEN or INVISIBLE.match(character) is not None


def escape(character: str) -> str:
    """A character as Python writes it in a string literal: `\\ufe0f`, `\\u0430`, `\\x0c`, `\\U000e0100`."""
    return character.encode("unicode_escape").decode("ascii")


def escaped_name(name: str) -> str:
    """A name with every character outside ASCII written as its escape: `index\\ufe0f`."""
    return NON_ASCII.sub(lambda match: escape(match[0]), name)


def reads_as(name: str) -> str | None:
    """The name Python reads when it is not the one written (its NFKC form: `ｉｎｄｅｘ` is `index`); else None."""
    normal = unicodedata.normalize("NFKC", name)
    return None if normal == name else normal


def odd_names(text: str) -> list[tuple[int, int]]:
    """The [start, end) of each name in `text` holding a character outside ASCII, in order."""
    found: list[tuple[int, int]] = []
    position = 0
    while (match := START.search(text, position)) is not None:
        if match["name"] is not None:
            if not match["name"].isascii():
                found += _names(match["name"], match.start())
            position = match.end()
        elif match["comment"] is not None:
            end = LINE_END.search(text, match.end())
            position = len(text) if end is None else end.start()
        else:
            body, position = match.end(), _string_end(text, match.end(), match["quote"])
            if "f" in match["prefix"].lower():
                found += _fields(text, body, position)
    return found


def _names(run: str, start: int) -> list[tuple[int, int]]:
    """The names of a run of word characters and others outside ASCII (`a\u200bb` is two names and a space)."""
    found, first = [], None
    for index, character in enumerate(run + " "):
        if ("a" + character).isidentifier():
            first = index if first is None else first
        elif first is not None:
            found.append((start + first, start + index))
            first = None
    return [(a, b) for a, b in found if not run[a - start : b - start].isascii()]


def _string_end(text: str, start: int, quote: str) -> int:
    """Where a string literal whose body begins at `start` ends (past its closing quote; the text's end if none)."""
    pattern, position = ENDS[quote], start
    while (match := pattern.search(text, position)) is not None:
        if match[0][0] != "\\":
            return match.end()
        position = match.end()
    return len(text)


def _fields(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The odd names in an f-string's replacement fields: `{ind\u0435x}` in `f"{ind\u0435x}"`."""
    found: list[tuple[int, int]] = []
    depth, opened = 0, start
    for brace in FIELD.finditer(text, start, end):
        if depth == 0:  # in the string's text, `{{` and `}}` are braces written
            depth, opened = (1, brace.end()) if brace[0] == "{" else (0, opened)
            continue
        depth += brace[0].count("{") - brace[0].count("}")  # a format spec's own fields nest
        if depth <= 0:
            found += [(opened + a, opened + b) for a, b in odd_names(text[opened : brace.start()])]
            depth = 0
    return found

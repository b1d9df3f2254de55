"""How much text of one answer the grader takes in: the rest is cut, with a note, before anything reads it.

Whatever comes back from the worker (a string result, a type name, an exception's message and
traceback, a dictionary's keys) is the student's to make, however large: the grader scrubs and renders
it, so each text is cut to `chars` characters and `lines` lines, and all the texts of one answer
together to `total` characters (a text the total has run out for keeps `FLOOR` characters, so that
short names, such as a state's keys, stay whole). Cutting is linear in the text's length. Standard
library only: the codec reads answers with it, the grader's limits (rubric.Limits) set it.
"""

from dataclasses import dataclass

FLOOR = 100  # characters a text keeps whatever the answer's total
CHARS_NOTE = " ... cut: {} more characters"
LINES_NOTE = "\n... cut: {} more lines"


@dataclass(frozen=True)
class Bounds:
    """The most text the grader takes from one answer (rubric.Limits sets them: text_chars, text_lines,
    answer_chars)."""

    chars: int  # characters of one text
    lines: int  # lines of one text
    total: int  # characters of all the texts of one answer


class Budget:
    """What is left of one answer's bounds, text by text."""

    def __init__(self, bounds: Bounds) -> None:
        self.bounds = bounds
        self.left = bounds.total

    def text(self, text: str) -> str:
        """`text` cut to its share (this text's bounds, what is left of the answer's total), with a note."""
        if len(text) < min(FLOOR, self.bounds.lines):  # within every bound: most texts, read at once
            self.left -= len(text)
            return text
        room = max(min(self.bounds.chars, self.left), FLOOR)
        kept = cut(text, room, self.bounds.lines)
        self.left -= min(len(text), room)
        return kept


def cut(text: str, chars: int, lines: int) -> str:
    """`text` kept to its first `lines` lines and `chars` characters, the cut said at its end."""
    end = _line_end(text, lines, chars)
    more = 0 if end is None else text.count("\n", end + 1) + (not text.endswith("\n"))
    if more:
        return text[:end] + LINES_NOTE.format(more)
    if len(text) > chars:
        return text[:chars] + CHARS_NOTE.format(len(text) - chars)
    return text


def _line_end(text: str, lines: int, limit: int) -> int | None:
    """Where line `lines` of `text` ends (at its newline) if that is within `limit` characters, else None."""
    position = -1
    for _ in range(lines):
        position = text.find("\n", position + 1, limit)
        if position < 0:
            return None
    return position

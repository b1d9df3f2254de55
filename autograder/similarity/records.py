"""The records of a similarity run: who wrote what, which pairs share which passages, and what was cut."""

from dataclasses import dataclass
from enum import Enum


class AuthorKind(Enum):
    """Whose code a text is: a student of the roster, or a known source (solutions, last year, the web)."""

    STUDENT = "student"
    KNOWN = "known"


@dataclass(frozen=True)
class Author:
    """One author's own code, function by function, as the page shows it.

    `key` is unique in a run: a student's folder name, or `LABEL/NAME` for a known source's author
    (`solutions` alone for the reference). `functions` maps "module.function" (e.g.
    "recurrence.rnn_forward") to the text shown for it: the TODO's body and the helpers it calls.
    """

    key: str
    kind: AuthorKind
    label: str  # the known source's label ("solutions", a --known folder's name); "" for a student
    functions: dict[str, str]


@dataclass(frozen=True)
class Span:
    """A matching passage: characters [start, end) of one author's shown text of one function."""

    start: int
    end: int


@dataclass(frozen=True)
class FunctionMatch:
    """What two authors share in one function: a score in 0..1 and where, on each side."""

    function: str
    score: float
    spans_a: tuple[Span, ...]  # offsets into authors[a].functions[function]
    spans_b: tuple[Span, ...]  # offsets into authors[b].functions[function]


@dataclass(frozen=True)
class Pair:
    """Two students of the roster and what they share (score in 0..1, highest first in a run)."""

    a: str
    b: str
    score: float
    functions: tuple[FunctionMatch, ...]


@dataclass(frozen=True)
class KnownMatch:
    """A student close to a known source's author (`source` is the label, `author` its key)."""

    student: str
    source: str
    author: str
    score: float
    functions: tuple[FunctionMatch, ...]  # spans_a: the student's side, spans_b: the source's


@dataclass(frozen=True)
class Cut:
    """An author's function compared in part: its first `compared` of `length` characters (the TODO, then the
    helpers it calls), the rest past `Limits.similarity_nodes` syntax nodes. The text kept is the part compared."""

    author: str
    function: str
    compared: int
    length: int


@dataclass(frozen=True)
class Similarity:
    """A whole run: the pairs ranked, the students close to a known source, clusters of three or more, and
    the functions compared in part."""

    pairs: tuple[Pair, ...]
    known: tuple[KnownMatch, ...]
    clusters: tuple[tuple[str, ...], ...]
    authors: dict[str, Author]  # every author a pair or a known match names, by key
    cut: tuple[Cut, ...] = ()  # by author, then function

"""Hostile modules for the similarity engine, built to a size: a TODO calling a one-line helper as long as asked.

The helper is a list of `ELEMENT`s on one line, one `character` at its start: with one character outside
ASCII, every place on the line is a UTF-8 column that is not a character offset (issue 45: 46.5 s of CPU
against 4.3 s for the same line in ASCII, at 255 KB). Used by the tests and by benchmarks/bench_similarity.py.
"""

from pathlib import Path

from autograder.locations import SOLUTIONS

ELEMENT = "-~-~-~x"  # 7 characters, 13 syntax nodes, and a fingerprint
CALLER = """

def gather_final(output, lengths):
    helper(output)
    return output[torch.arange(output.shape[0]), lengths - 1]
"""


def long_line(size: int, character: str = "a", base: Path = SOLUTIONS / "padding.py") -> str:
    """`base` (the reference's padding.py), then `def helper(x): return ['c', -~-~-~x, ...]` on one line, then a
    gather_final calling it (the last definition: the one compared): at most `size` bytes in UTF-8."""
    head = base.read_text(encoding="utf-8") + f"\n\ndef helper(x):  return ['{character}'"
    room = size - len(head.encode()) - len("]\n" + CALLER)
    return head + f", {ELEMENT}" * (room // (len(ELEMENT) + 2)) + "]\n" + CALLER


def elements(size: int, character: str = "a") -> int:
    """How many ELEMENTs the helper of `long_line(size, character)` holds."""
    return long_line(size, character).count(ELEMENT)

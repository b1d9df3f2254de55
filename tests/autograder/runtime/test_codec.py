"""What comes back from the worker is bounded as it is read: every text cut, with a note, before the grader sees it."""

import re

import torch

from autograder import rubric
from autograder.runtime import codec
from autograder.runtime.bounds import FLOOR, Bounds, cut
from autograder.runtime.codec import Effect, Unsupported

BOUNDS = rubric.load().limits.text  # the grader's own, from rubric.toml
NOTE = re.compile(r"\.\.\. cut: (\d+) more (characters|lines)$")


def read(value):
    """`value` across the wire, read as the grader reads an answer."""
    return codec.loads(codec.dumps(value), BOUNDS)


def note(text: str) -> tuple[int, str]:
    found = NOTE.search(text)
    assert found, f"no cut note at the end of {text[-80:]!r}"
    return int(found[1]), found[2]


def test_it_cuts_a_string_of_millions_of_lines_to_its_lines_with_a_note():
    text = read("a\n" * 2_000_000)
    assert text.startswith("a\na\n")
    assert text.count("\n") == BOUNDS.lines  # the lines kept, then the note on a line of its own
    assert note(text) == (2_000_000 - BOUNDS.lines, "lines")


def test_it_cuts_one_huge_line_to_its_characters_with_a_note():
    text = read("x" * 10_000_000)
    assert text.startswith("x" * BOUNDS.chars) and not text.startswith("x" * (BOUNDS.chars + 1))
    assert note(text) == (10_000_000 - BOUNDS.chars, "characters")


def test_it_cuts_a_huge_type_name():
    value = read([Unsupported("Agreeable" * 1_000_000)])
    assert type(value[0]) is Unsupported
    assert len(value[0].type_name) < BOUNDS.chars + 100
    assert note(value[0].type_name) == (9_000_000 - BOUNDS.chars, "characters")


def test_it_cuts_an_error_message_and_traceback_however_the_worker_made_them():
    line = '  File "exercises/baseline.py", line 3, in bag_of_counts\n'
    answer = {"ok": False, "phase": "call", "error": {"type": "E" * 50_000, "message": "m" * 10**6}}
    answer["error"]["traceback"] = line * 100_000  # a cause chain 100,000 deep
    error = read(answer)["error"]
    assert error["message"].startswith("m" * 100) and note(error["message"])[1] == "characters"
    assert note(error["type"])[1] == "characters"
    assert error["traceback"].count("\n") <= BOUNDS.lines and note(error["traceback"])[1] in ("lines", "characters")


def test_it_bounds_all_the_texts_of_one_answer_together():
    texts = read(["y" * BOUNDS.chars] * 1000)  # each within its own bounds, a thousand of them
    kept = sum(len(text) for text in texts)
    assert kept <= BOUNDS.total + 1000 * (FLOOR + 50)
    assert texts[0] == "y" * BOUNDS.chars and note(texts[-1])[1] == "characters"


def test_it_keeps_short_names_whole_when_the_answers_total_has_run_out():
    state = {"rnn.weight_ih_l0": torch.ones(2, 3), "head.bias": torch.zeros(2)}
    answer = read({"ok": True, "result": "z" * 10**6, "effects": {"0": Effect(state)}})
    assert note(answer["result"])[1] == "characters"
    assert sorted(answer["effects"]["0"].state) == sorted(state)


def test_it_keeps_an_honest_answer_as_it_was():
    honest = {
        "ok": True,
        "layer_calls": ["nn.LSTM"],
        "grad_modes": {"0": [True, False]},
        "result": (torch.arange(6.0).reshape(2, 3), [1, 2, 3], "a short note\non two lines"),
    }
    answer = read(honest)
    assert answer["layer_calls"] == ["nn.LSTM"] and answer["grad_modes"] == {"0": [True, False]}
    assert torch.equal(answer["result"][0], honest["result"][0])
    assert answer["result"][1:] == ([1, 2, 3], "a short note\non two lines")


def test_it_reads_a_request_whole_without_bounds():
    assert codec.loads(codec.dumps("a\n" * 10_000)) == "a\n" * 10_000  # the grader's own requests, in the worker


def test_it_cuts_at_whichever_bound_comes_first():
    assert cut("one\ntwo\nthree", 100, 2) == "one\ntwo\n... cut: 1 more lines"
    assert cut("one\ntwo\n", 100, 2) == "one\ntwo\n"  # nothing after the last line: nothing cut
    assert cut("abcdef\nghi", 4, 2) == "abcd ... cut: 6 more characters"
    assert cut("short", 100, 1) == "short"


def test_it_gives_each_text_at_least_the_floor():
    budget = codec.Budget(Bounds(chars=1000, lines=10, total=0))
    assert budget.text("n" * FLOOR) == "n" * FLOOR
    assert note(budget.text("n" * (FLOOR + 1))) == (1, "characters")

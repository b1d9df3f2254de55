"""Names outside printable ASCII in shown code, found so the page writes them as escapes; strings and comments left."""

import pytest

from autograder.similarity import names

LOOK_ALIKES = {
    "index\ufe0f": "index\\ufe0f",  # a variation selector
    "index\u3164": "index\\u3164",  # a Hangul filler
    "\u115findex": "\\u115findex",
    "ind\u0435x": "ind\\u0435x",  # a Cyrillic е
    "ｉndex": "\\uff49ndex",  # full width: Python reads it as `index`
    "index\U000e0100": "index\\U000e0100",  # a variation selector past the first plane
}


def odd(text: str) -> list[str]:
    return [text[start:end] for start, end in names.odd_names(text)]


@pytest.mark.parametrize("name", LOOK_ALIKES)
def test_it_finds_a_name_that_looks_like_an_ascii_one_and_writes_it_as_python_escapes(name):
    text = f"def f(x):\n    {name} = x.sum(dim=1)\n    return {name} + index\n"
    assert odd(text) == [name, name]
    assert names.escaped_name(name) == LOOK_ALIKES[name] and names.escaped_name(name).isascii()


def test_it_says_which_name_python_reads_when_it_is_not_the_one_written():
    assert names.reads_as("ｉｎｄｅｘ") == "index"
    assert names.reads_as("index\ufe0f") is None and names.reads_as("ind\u0435x") is None


def test_it_leaves_comments_and_strings_to_be_shown_as_written():
    text = 'x = \'ind\u0435x\' + """a\nстрока"""  # 状態 ind\u0435x\ny = b\'\\\'ü\' + r"é"\n'
    assert odd(text) == []


def test_it_finds_names_in_an_f_strings_fields_but_not_in_its_text():
    text = "s = f\"ind\u0435x {ind\u0435x!r:>{wіdth}} {{ind\u0435x}} {d['ключ']}\"\nt = ind\u0435x\n"
    assert odd(text) == ["ind\u0435x", "wіdth", "ind\u0435x"]


def test_it_finds_names_after_a_string_or_a_comment_that_never_ends():
    assert odd("x = 'abc\ny\u0430 = 1\n") == ["y\u0430"], "a quote's string ends at its line"
    assert odd('x = """abc\ny\u0430 = 1\n') == [] and odd("# y\u0430") == []


def test_it_takes_no_invisible_format_character_or_space_for_a_name():
    assert odd("a\u200bb = c\u00a0+ d\n") == []
    assert all(names.unseen(c) for c in "\u200b\u00a0\ufe0f\u3164\u202e\u2066\U000e0100")
    assert not any(names.unseen(c) for c in "\n\ta é状а")


def test_it_finds_nothing_in_plain_ascii_code():
    text = "def f(x):\n    return [x * i for i in range(3)]  # ok\n" * 1000
    assert odd(text) == []

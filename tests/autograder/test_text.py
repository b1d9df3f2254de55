"""How student text is written: escaped names, Markdown code GitHub renders inert, safe workflow commands."""

import hostile
import pytest

from autograder.text import cell, clean, code, escaped, fenced, valid, workflow_command


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("notes-\udcff.txt", "notes-\\xff.txt"),  # a byte that is not UTF-8, as os.fsdecode gives it
        ("notes-\\xff.txt", "notes-\\\\xff.txt"),  # the same four characters, told apart
        ("a\nb\r\tc", "a\\nb\\r\\tc"),
        ("\x1b[31mred", "\\x1b[31mred"),
        ("\u202eevil.txt", "\\u202eevil.txt"),  # a bidi override would turn the name round
        ("zero\u200bwidth", "zero\\u200bwidth"),
        ("été · ∕ 🙂", "été · ∕ 🙂"),  # visible text as it is
    ],
)
def test_it_escapes_a_name_onto_one_printable_unambiguous_line(raw, shown):
    assert escaped(raw) == shown


def test_it_makes_any_text_writable_as_utf_8():
    assert valid("a\udcff\ud800b").encode("utf-8") == b"a\\xff\\ud800b"
    assert clean("\udcff\n::add-mask::x").encode("utf-8") == b"\\xff\n: :add-mask::x"


@pytest.mark.parametrize("name", sorted(hostile.shown(name) for name in hostile.NAMES.values()))
def test_it_shows_a_name_as_code_that_github_renders_inert_in_a_line_and_in_a_table(name):
    line = f"- not read: {code(name)}, and more"
    row = f"| item | score |\n|---|---|\n| {cell(code(name))} | 0 |"
    for markdown in (line, row):
        assert hostile.live(markdown, [name], []) == [], markdown


def test_it_shows_text_holding_backticks_and_blank_lines_as_one_code_span():
    text = "`x` `` @user\n\n## heading ``"
    parts = hostile.rendered(f"a {code(text)} b")
    assert parts.code == ["`x` `` @user\\n\\n## heading ``"] and parts.headings == []


def test_it_fences_text_that_holds_fences_so_that_nothing_in_it_closes_the_block():
    text = "```\n@user <img src=x>\n````\n# heading"
    parts = hostile.rendered(f"{fenced(text)}\n\nafter")
    assert parts.code == [text + "\n"] and parts.headings == [] and "".join(parts.text).strip() == "after"


def test_it_writes_a_workflow_command_whose_data_can_neither_end_it_nor_start_another():
    line = workflow_command("error", "50% done\n::add-mask::x", title="for a, b: c")
    assert line == "::error title=for a%2C b%3A c::50%25 done%0A::add-mask::x"
    assert hostile.workflow_commands(line) == [line]


@pytest.mark.parametrize(
    "what",
    ["a heading", "HTML", "a link", "an image", "a mention", "a team mention", "an issue reference", "an address"],
)
def test_its_check_finds_the_same_name_live_when_it_is_not_code(what):
    """The check the reports are held to, on raw Markdown: it must see what GitHub would make live."""
    name = hostile.shown(hostile.NAMES[what])
    assert hostile.live(f"{name}\n\n- not read: {name}", [name], []) != []

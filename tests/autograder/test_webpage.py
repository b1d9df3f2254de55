"""The pages' shared shell: every piece of content inside a landmark, every table named, reachable and headed."""

import re

import pytest

from autograder import webpage


def test_a_table_sits_in_a_named_region_the_keyboard_reaches_so_it_scrolls_alone_on_a_phone():
    html = webpage.table(["student", "score"], [["ada", "1"]], "scores", (1,), label="Scores <all>")
    assert html.startswith('<div class="table-scroll" role="region" aria-label="Scores &lt;all&gt;" tabindex="0">')
    assert '<table id="scores">' in html and '<td class="number">1</td>' in html
    assert ".table-scroll { overflow-x: auto;" in webpage.STYLE


def test_a_table_refuses_a_column_without_a_heading_a_screen_reader_could_read():
    with pytest.raises(ValueError, match="heading"):
        webpage.table(["", "student"], [], label="Pairs")


def test_the_page_puts_its_title_in_a_header_its_contents_in_a_named_nav_and_its_sections_in_main():
    html = webpage.document("Report", "default-src 'none'", "", "<p>words</p>", {"one": ("One", "<p>text</p>")})
    body = html[html.index("<body>") + len("<body>") : html.index("</body>")]
    landmarks = re.findall(r"^<(header|nav|main)\b", body, flags=re.MULTILINE)
    assert landmarks == ["header", "nav", "main"]
    assert '<nav aria-label="Contents">' in body
    outside = re.sub(r"<(header|nav|main)\b.*?</\1>", "", body, flags=re.DOTALL).strip()
    assert outside == "", "content outside every landmark"
    assert body.index('<section id="one">') > body.index("<main>")

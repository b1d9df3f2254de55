"""similarity.html from hand-made records: the highlights at the engine's offsets, student text inert, bounded."""

import dataclasses
import json
from html.parser import HTMLParser

from similarity_records import ADA, BOB, GATHER, roster, span_of

from autograder.similarity import outputs, page
from autograder.similarity.records import Cut, FunctionMatch, Pair, Span

ALLOWED = {"html", "head", "meta", "title", "style", "body", "header", "nav", "ol", "li", "a", "section", "p"}
ALLOWED |= {"h1", "h2", "h3", "h4", "h5", "table", "thead", "tbody", "tr", "th", "td", "div", "pre", "mark", "code"}
ALLOWED |= {"span", "main", "details", "summary"}  # the page's own tags, nothing else


class Read(HTMLParser):
    """The tags a page holds, the text of every <mark>, and the page's text."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.marks: list[str] = []
        self.text: list[str] = []
        self._in_mark = False
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_mark = self._in_mark or tag == "mark"
        if tag == "mark":
            self.marks.append("")

    def handle_endtag(self, tag):
        self._in_mark = self._in_mark and tag != "mark"

    def handle_data(self, data):
        self.text.append(data)
        if self._in_mark:
            self.marks[-1] += data


def test_it_marks_each_passage_at_the_offsets_the_engine_gives():
    text = "index = (lengths - 1)\nreturn output[rows, index]\n"
    spans = (span_of(text, "(lengths - 1)"), span_of(text, "output[rows"))
    assert page.highlighted(text, spans) == (
        "index = <mark>(lengths - 1)</mark>\nreturn <mark>output[rows</mark>, index]\n"
    )


def test_it_joins_overlapping_and_touching_passages_into_one_mark_and_keeps_apart_ones_apart():
    text = "abcdefghij"
    overlapping = (Span(1, 4), Span(3, 6))
    touching = (Span(1, 3), Span(3, 5))
    apart = (Span(6, 8), Span(1, 3))  # out of order too
    assert page.highlighted(text, overlapping) == "a<mark>bcdef</mark>ghij"
    assert page.highlighted(text, touching) == "a<mark>bcde</mark>fghij"
    assert page.highlighted(text, apart) == "a<mark>bc</mark>def<mark>gh</mark>ij"
    assert page.highlighted(text, (Span(2, 6), Span(3, 4))) == "ab<mark>cdef</mark>ghij"  # one inside another


def test_it_drops_empty_passages_and_cuts_those_past_the_text():
    assert page.highlighted("abc", (Span(2, 2), Span(5, 9))) == "abc"
    assert page.highlighted("abc", (Span(-3, 1), Span(2, 99))) == "<mark>a</mark>b<mark>c</mark>"


def test_it_counts_offsets_in_characters_so_unicode_code_is_marked_where_the_engine_found_it():
    text = "# déjà vu 🐍\nh = torch.tanh(x)  # 状態\n"
    marked = page.highlighted(text, (span_of(text, "torch.tanh(x)"), span_of(text, "状態")))
    assert marked == "# déjà vu 🐍\nh = <mark>torch.tanh(x)</mark>  # <mark>状態</mark>\n"


def test_it_shows_code_that_looks_like_html_as_text_even_inside_a_mark():
    text = 'x = "</pre><script>alert(1)</script>" & y\n'
    marked = page.highlighted(text, (span_of(text, "<script>alert(1)"),))
    assert "<script>" not in marked and "</pre>" not in marked
    assert Read(f"<pre>{marked}</pre>").marks == ["<script>alert(1)"]
    assert "".join(Read(marked).text) == text


def test_it_writes_characters_a_reader_would_not_see_as_escapes_without_moving_the_marks():
    text = "s = 'abc\u202edcba'\u200b\r\nreturn s\n"
    marked = page.highlighted(text, (span_of(text, "return s"),))
    assert marked == "s = &#x27;abc\\u202edcba&#x27;\\u200b\\r\n<mark>return s</mark>\n"


def test_it_cuts_a_long_function_and_says_how_much_it_left_out():
    text = "x = 1\n" * 2000
    marked = page.highlighted(text, (Span(0, 5), Span(page.FUNCTION_CHARS - 2, page.FUNCTION_CHARS + 50)))
    assert marked.count("<mark>") == 2
    assert f"{len(text) - page.FUNCTION_CHARS} more characters not shown" in marked
    assert len(marked) < page.FUNCTION_CHARS + 200


def test_the_page_shows_both_sides_of_each_function_with_the_shared_passages_marked():
    read = Read(page.page(roster(), "week07"))
    assert read.marks.count("(lengths - 1).clamp(min=0)") == 2  # ada's side and bob's side
    assert read.marks.count("logits[:, :-1]") == 2 and read.marks.count("tokens[:, 1:]") == 2
    assert ADA[GATHER] in read.marks  # the known match: all of ada's gather_final, on both sides
    sections = [attrs.get("id") for tag, attrs in read.tags if tag == "section"]
    assert sections == ["pairs", "pair-1", "pair-2", "known", "known-1", "clusters"]


def test_hostile_names_are_shown_as_text_never_as_markup():
    names = ("<script>alert(1)</script>", '"onload=alert(1) x="', "bob\u202e\nevil")
    html = page.page(roster(*names), '<img src="http://example.com/x">')
    read = Read(html)
    assert {tag for tag, _ in read.tags} <= ALLOWED
    assert all(not key.startswith("on") for _, attrs in read.tags for key in attrs)
    shown = "".join(read.text)
    assert "<script>alert(1)</script>" in shown and '"onload=alert(1) x="' in shown
    assert "bob\\u202e\\nevil" in shown and "\u202e" not in html


def test_the_page_fetches_nothing_and_its_policy_forbids_every_request():
    html = page.page(roster(), "week07")
    read = Read(html)
    policy = next(attrs["content"] for tag, attrs in read.tags if attrs.get("http-equiv") == "Content-Security-Policy")
    assert policy.startswith("default-src 'none'")
    links = [attrs["href"] for tag, attrs in read.tags if tag == "a"]
    assert links and all(link.startswith("#") for link in links)
    assert not any("src" in attrs for _, attrs in read.tags)


def test_its_words_point_at_code_to_look_at_and_say_no_grade_changes():
    html = page.page(roster(), "week07")
    assert "plagiar" not in html.lower() and "cheat" not in html.lower()
    assert page.NOTHING_CHANGES in "".join(Read(html).text)
    assert "look at" in html.lower()


def test_a_roster_of_a_thousand_keeps_the_page_to_the_top_pairs_and_says_how_many_it_shows():
    one = roster()
    pairs = tuple(dataclasses.replace(one.pairs[0], score=1 - n / 2000) for n in range(1000))
    html = page.page(dataclasses.replace(one, pairs=pairs), "big")
    shown = [attrs["id"] for tag, attrs in Read(html).tags if tag == "section" and attrs["id"].startswith("pair-")]
    assert len(shown) == page.PAIRS_SHOWN
    assert f"The {page.PAIRS_SHOWN} highest of 1000 pairs" in html
    assert len(html) < 200 * page.PAIRS_SHOWN * 20


def test_a_function_the_two_share_nothing_in_is_named_not_shown_and_missing_text_is_said():
    lonely = Pair(
        "ada",
        "ghost",
        0.3,
        (FunctionMatch(GATHER, 0.3, (Span(0, 5),), (Span(0, 2),)), FunctionMatch("x.nothing", 0.0, (), ())),
    )
    html = page.page(dataclasses.replace(roster(), pairs=(lonely,)), "week07")
    assert "Nothing shared in x.nothing." in html
    assert "(no text kept)" in html  # ghost is in no author record


def test_write_outputs_writes_the_json_the_csv_and_the_page(tmp_path):
    similarity = roster()
    paths = outputs.write_outputs(similarity, tmp_path / "out", "week07")
    assert [path.name for path in paths] == ["similarity.json", "similarity.csv", "similarity.html"]
    assert json.loads(paths[0].read_text()) == outputs.as_json(similarity)
    assert paths[1].read_text().startswith("kind,a,b,source,score,")
    assert Read(paths[2].read_text()).marks


LOOK_ALIKE = {GATHER: "ind\u0435x = (lengths - 1).clamp(min=0)\nreturn output[torch.arange(B), index\ufe0f]\n"}


def _with_look_alikes(similarity):
    """The roster with bob's gather_final written with a Cyrillic е and a variation selector in its names."""
    bob = dataclasses.replace(similarity.authors["bob"], functions={**BOB, **LOOK_ALIKE})
    close = similarity.pairs[0]
    gather = dataclasses.replace(close.functions[0], spans_b=(span_of(LOOK_ALIKE[GATHER], "(lengths - 1)"),))
    pair = dataclasses.replace(close, functions=(gather, *close.functions[1:]))
    return dataclasses.replace(similarity, authors={**similarity.authors, "bob": bob}, pairs=(pair,))


def test_it_writes_names_outside_printable_ascii_with_escapes_marked_and_says_what_they_mean():
    html = page.page(_with_look_alikes(roster()), "week07")
    read = Read(html)
    odd = [attrs for tag, attrs in read.tags if tag == "span" and attrs.get("class") == "odd-name"]
    shown = "".join(read.text)
    assert "ind\\u0435x = " in shown and "output[torch.arange(B), index\\ufe0f]" in shown
    assert "\u0435" not in html and "\ufe0f" not in html
    assert len(odd) >= 4, "each name marked where the code shows it and in the note"
    assert "Python reads the name as written, not as it looks" in shown and "index\\ufe0f (bob)" in shown
    assert "Names written with escapes" not in page.page(roster(), "week07"), "no note where no name is odd"


def test_it_keeps_the_marks_on_a_line_with_an_escaped_name():
    text = "ind\u0435x = (lengths - 1)\n"
    marked = page.highlighted(text, (span_of(text, "ind\u0435x = (lengths"),))
    assert marked.startswith('<mark><span class="odd-name"') and "ind\\u0435x</span> = (lengths</mark> - 1)" in marked


def test_it_shows_plain_ascii_code_as_before():
    text = ADA[GATHER]
    assert page.highlighted(text, (span_of(text, "(lengths - 1)"),)) == (
        "index = <mark>(lengths - 1)</mark>.clamp(min=0)\nreturn output[torch.arange(B), index]\n"
    )


def test_it_shows_other_alphabets_in_comments_and_strings_but_no_invisible_character_anywhere():
    text = "s = 'ключ\u202e' + '\u2066x\u2069'  # 状態 ok\ufe0f\u00a0\nt = f'{ind\u0435x}'\n"
    shown = page.highlighted(text, ())
    assert "ключ\\u202e" in shown and "\\u2066x\\u2069" in shown and "# 状態 ok\\ufe0f\\xa0" in shown
    assert 'f&#x27;{<span class="odd-name"' in shown and "ind\\u0435x</span>}" in shown


def test_the_page_lists_the_functions_compared_in_part_and_says_so_under_the_text():
    cut = Cut("bob", GATHER, len(BOB[GATHER]), 250_000)
    html = page.page(dataclasses.replace(roster(), cut=(cut,)), "week07")
    read = Read(html)
    assert [attrs["id"] for tag, attrs in read.tags if tag == "section"][-1] == "cut"
    shown = "".join(read.text)
    assert "Compared in part" in shown and f"{len(BOB[GATHER]):,} of 250,000" in shown
    assert f"compared up to here: {250_000 - len(BOB[GATHER]):,} more characters" in shown
    assert "Compared in part" not in page.page(roster(), "week07")


def test_similarity_json_says_which_functions_were_compared_in_part():
    cut = Cut("bob", GATHER, 120, 250_000)
    written = outputs.as_json(dataclasses.replace(roster(), cut=(cut,)))
    assert written["cut"] == [{"author": "bob", "function": GATHER, "compared": 120, "characters": 250_000}]
    assert outputs.as_json(roster())["cut"] == []

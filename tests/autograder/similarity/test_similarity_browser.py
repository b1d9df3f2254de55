"""similarity.html in a real browser: hand-made records written by write_outputs, opened in headless Chromium.

The browser is the system's, as for the class report (tests/helpers/browser.py). axe-core finds nothing
critical, serious or moderate on it, its code folded or opened, at a desktop's width and a phone's (issue 48),
and a class of forty keeps it a page of bounded height. The page and screenshots are left in tests/output/.
"""

import dataclasses
import shutil
from pathlib import Path

import pytest
from browser import opened, violations
from similarity_records import ADA, BOB, GATHER, roster, student
from support import ROOT

from autograder.similarity import outputs, page
from autograder.similarity.records import Cut, Pair, Similarity

OUTPUT = ROOT / "tests" / "output"
HOSTILE = '<img src="http://127.0.0.1:9/x">"onload=alert(1)'  # a student's folder name
PHONE, DESKTOP = 390, 1200
CLASS = 40  # students: 780 pairs, 40 close to the solutions, more groups and cut functions than are listed
# The height a page may take, from what it lists (page.LISTED entries of each list, and one line per fold): a
# listed pair's table row, heading and folded code line, and the page's fixed parts (title, words, contents,
# section headings), each measured once on a phone's width with room to spare, not fitted to this roster.
ENTRY = {DESKTOP: 120, PHONE: 260}  # px per listed entry
FIXED = {DESKTOP: 1500, PHONE: 3000}  # px


def opened_all(visit) -> None:
    """Every <details> of the page opened, as a reader who clicks every fold."""
    visit.page.evaluate("document.querySelectorAll('details').forEach(fold => { fold.open = true; })")


def height(visit) -> int:
    return visit.page.evaluate("document.documentElement.scrollHeight")


def width(visit) -> int:
    return visit.page.evaluate("document.documentElement.scrollWidth")


def class_of(count: int) -> Similarity:
    """`count` students, every pair of them ranked, each close to the solutions, one group per ten, and a
    function of each compared in part: every list longer than the page lists."""
    one = roster()
    keys = [f"student-{n:02d}" for n in range(count)]
    authors = {key: student(key, ADA if n % 2 else BOB) for n, key in enumerate(keys)}
    shared = one.pairs[0].functions
    pairs = [Pair(a, b, 0.99 - n / 1000, shared) for n, (a, b) in enumerate(_pairs(keys))]
    leak = one.known[0]
    known = [dataclasses.replace(leak, student=key, score=0.98 - n / 1000) for n, key in enumerate(keys)]
    groups = [tuple(keys[n : n + 3]) for n in range(0, count, 3)]
    cut = [Cut(key, GATHER, 40, 60) for key in keys]
    return Similarity(tuple(pairs), tuple(known), tuple(groups), {**one.authors, **authors}, tuple(cut))


def _pairs(keys: list[str]) -> list[tuple[str, str]]:
    return [(a, b) for n, a in enumerate(keys) for b in keys[n + 1 :]]


def written(similarity: Similarity, folder: Path, name: str) -> str:
    """The page written as `autograde similarity` writes it, copied to tests/output/NAME; its address."""
    path = outputs.write_outputs(similarity, folder, "week07")[2]
    OUTPUT.mkdir(exist_ok=True)
    shutil.copyfile(path, OUTPUT / name)
    return path.as_uri()


@pytest.mark.browser  # a browser start: a few seconds
def test_the_similarity_page_opens_in_a_real_browser_with_the_shared_passages_marked_and_fetches_nothing(tmp_path):
    url = written(roster("ada", HOSTILE, "cal"), tmp_path / "out", "similarity.html")
    with opened(url, DESKTOP) as visit:
        page_ = visit.page
        folded = page_.locator("#pair-1 mark").first.is_visible()
        page_.locator("#pair-1 summary").click()  # the reader opens the pair's code
        marks = page_.locator("#pair-1 mark")
        texts = [mark.inner_text() for mark in marks.all()]
        boxes = [mark.bounding_box() for mark in marks.all()]
        background = marks.first.evaluate("mark => getComputedStyle(mark).backgroundColor")
        sides = [side.bounding_box() for side in page_.locator("#pair-1 .side").all()[:2]]
        heading = page_.locator("#pair-1 h3").inner_text()
        page_.screenshot(path=str(OUTPUT / "similarity.png"), full_page=True)
    assert visit.errors == []
    assert visit.requests == [url], "the page asked for something besides itself"
    assert not folded, "a pair's code is folded until the reader opens it"
    assert texts == ["(lengths - 1).clamp(min=0)"] * 2 + ["logits[:, :-1]", "tokens[:, 1:]"] * 2
    assert all(box and box["width"] > 0 and box["height"] > 0 for box in boxes), boxes
    assert background not in ("rgba(0, 0, 0, 0)", "transparent"), background
    assert sides[0]["x"] + sides[0]["width"] <= sides[1]["x"] and sides[0]["y"] == sides[1]["y"]  # side by side
    assert heading == f"1. ada and {HOSTILE}: 0.82"
    print(f"\nscreenshot {OUTPUT / 'similarity.png'}")


@pytest.mark.browser  # a browser start per width: a few seconds each
@pytest.mark.parametrize("screen", [DESKTOP, PHONE])
def test_axe_finds_nothing_critical_serious_or_moderate_on_the_similarity_page_folded_or_open(tmp_path, screen):
    url = written(roster("ada", HOSTILE, "cal"), tmp_path / "out", f"similarity-{screen}.html")
    with opened(url, screen) as visit:
        folded = violations(visit.page)
        opened_all(visit)
        unfolded = violations(visit.page)
        wide = width(visit)
        sides = [side.bounding_box() for side in visit.page.locator("#pair-1 .side").all()[:2]]
    assert folded == [], "\n".join(folded)
    assert unfolded == [], "\n".join(unfolded)
    assert wide <= screen, f"the page is {wide} px wide on a {screen} px screen"
    if screen == PHONE:  # one author's text above the other's, each as wide as the screen allows
        assert sides[0]["y"] + sides[0]["height"] <= sides[1]["y"], sides


@pytest.mark.browser  # a browser start per width: a few seconds each
@pytest.mark.parametrize("screen", [DESKTOP, PHONE])
def test_a_class_of_forty_gets_a_page_of_bounded_height_that_axe_passes(tmp_path, screen):
    url = written(class_of(CLASS), tmp_path / "out", f"similarity-class-{screen}.html")
    with opened(url, screen) as visit:
        tall = height(visit)
        wide = width(visit)
        listed = visit.page.locator("section.pair:visible").count()
        found = violations(visit.page)
        visit.page.screenshot(path=str(OUTPUT / f"similarity-class-{screen}.png"), full_page=True)
    lists = 4  # pairs, known sources, groups, cut functions: LISTED entries each, the rest folded
    bound = ENTRY[screen] * page.LISTED * lists + FIXED[screen]
    assert listed == 2 * page.LISTED  # the first pairs and students close to a known source; the rest folded
    assert tall <= bound, f"{tall} px tall at {screen} px wide for {CLASS} students (at most {bound})"
    assert wide <= screen, f"the page is {wide} px wide on a {screen} px screen"
    assert found == [], "\n".join(found)
    print(f"\n{CLASS} students at {screen} px: {tall} px tall (bound {bound})")

"""similarity.html in a real browser: hand-made records written by write_outputs, opened in headless Chromium.

The browser is the system's, as for the class report (tests/helpers/browser.py). The page and a
screenshot are left in tests/output/.
"""

import shutil

import pytest
from browser import opened
from similarity_records import roster
from support import ROOT

from autograder.similarity import outputs

OUTPUT = ROOT / "tests" / "output"
HOSTILE = '<img src="http://127.0.0.1:9/x">"onload=alert(1)'  # a student's folder name


@pytest.mark.browser  # a browser start: a few seconds
def test_the_similarity_page_opens_in_a_real_browser_with_the_shared_passages_marked_and_fetches_nothing(tmp_path):
    written = outputs.write_outputs(roster("ada", HOSTILE, "cal"), tmp_path / "out", "week07")
    url = written[2].as_uri()
    OUTPUT.mkdir(exist_ok=True)
    shutil.copyfile(written[2], OUTPUT / "similarity.html")
    with opened(url, 1200) as visit:
        page = visit.page
        marks = page.locator("#pair-1 mark")
        texts = [mark.inner_text() for mark in marks.all()]
        boxes = [mark.bounding_box() for mark in marks.all()]
        background = marks.first.evaluate("mark => getComputedStyle(mark).backgroundColor")
        sides = [side.bounding_box() for side in page.locator("#pair-1 .side").all()[:2]]
        heading = page.locator("#pair-1 h3").inner_text()
        page.screenshot(path=str(OUTPUT / "similarity.png"), full_page=True)
    assert visit.errors == []
    assert visit.requests == [url], "the page asked for something besides itself"
    assert texts == ["(lengths - 1).clamp(min=0)"] * 2 + ["logits[:, :-1]", "tokens[:, 1:]"] * 2
    assert all(box and box["width"] > 0 and box["height"] > 0 for box in boxes), boxes
    assert background not in ("rgba(0, 0, 0, 0)", "transparent"), background
    assert sides[0]["x"] + sides[0]["width"] <= sides[1]["x"] and sides[0]["y"] == sides[1]["y"]  # side by side
    assert heading == f"1. ada and {HOSTILE}: 0.82"
    print(f"\nscreenshot {OUTPUT / 'similarity.png'}")

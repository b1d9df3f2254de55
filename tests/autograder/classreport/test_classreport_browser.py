"""The class report in a real browser: a roster graded from the corpus, opened in headless Chromium.

The browser is the system's (Debian's `chromium`, which `.ci/run` installs; the runner's Chrome in
GitHub's CI, named by REPORT_BROWSER), driven by Playwright with `executable_path`: Playwright's
own browser download is never used. axe-core finds nothing critical, serious or moderate on it, at a desktop's
width and a phone's (issue 48). The page and a screenshot are left in tests/output/.
"""

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from browser import opened, violations
from support import ROOT, appended_to, build_submission, replace_in

from autograder import cli, rubric, stubs
from autograder.checks.catalogue import CATALOGUE

MISTAKES = ROOT / "tests" / "corpus" / "mistakes"
OUTPUT = ROOT / "tests" / "output"
ONLY = "gather_final,next_token_loss"  # a plain item and a function with a threshold item: cheap to grade
STUDENTS = {  # student -> the corpus file they submit: several mistakes, several students each
    "ada": "G1_last_column",
    "bob": "G1_every_row_at_minus_one",
    "dee": "S1_same_slice",
    "eve": "S1_whole_sequence_both_sides",
    "fay": "G2_index_lengths",
}
HANGING = "aaron"  # first in the queue: its gather_final runs into the call timeout beside the others
MISSING = "zed"  # on the roster, never graded


def mistake_of(corpus_file: str) -> str:
    return corpus_file.split("_")[0]  # the corpus names each file after its catalogue id


def module_of(function: str) -> str:
    return next(todo.module for todo in stubs.todos() if todo.function.split(".")[0] == function)


def roster(folder: Path) -> Path:
    """Submissions: the corpus mistakes appended to the reference, one whose gather_final never returns."""
    for student, corpus_file in STUDENTS.items():
        module = module_of(CATALOGUE[mistake_of(corpus_file)].function)
        text = (MISTAKES / f"{corpus_file}.py").read_text()
        build_submission(folder / student, edits={module: appended_to(module, text)})
    # it sleeps rather than spins: the same timeout, without taking a core from the rest of the suite
    asleep = "    import time\n    time.sleep(600)\n    index = (lengths - 1)"
    hanging = replace_in("padding", "    index = (lengths - 1)", asleep)
    build_submission(folder / HANGING, edits={"padding": hanging})
    return folder


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """grade-all over the roster, then the report with the roster file (its missing student included)."""
    work = tmp_path_factory.mktemp("class")
    results = work / "results"
    assert cli.main(["grade-all", str(roster(work / "submissions")), "--out", str(results), "--only", ONLY]) == 0
    assert (results / "report.html").is_file() and (results / "misconceptions.md").is_file()
    names = [*STUDENTS, HANGING]
    for name in names:
        (results / name / "student").write_text(f"week07/{name}\n")  # as the roster workflow records them
    (work / "roster.txt").write_text("".join(f"week07/{name}\n" for name in [*names, MISSING]))
    out = work / "report"
    arguments = ["report", str(results), "--out", str(out), "--roster", str(work / "roster.txt"), "--only", ONLY]
    assert cli.main(arguments) == 0
    OUTPUT.mkdir(exist_ok=True)
    shutil.copyfile(out / "report.html", OUTPUT / "class-report.html")
    return out / "report.html"


@pytest.mark.browser  # grades a roster: about half a minute on two cores
def test_the_report_opens_in_a_real_browser_shows_the_class_and_fetches_nothing(report):
    url = report.as_uri()
    with opened(url, 1100) as visit:
        page = visit.page
        charts = [chart.bounding_box() for chart in page.locator("svg.chart").all()]
        rows = [
            [cell.inner_text().strip() for cell in row.locator("td").all()]
            for row in page.locator("#misconception-table tbody tr").all()
        ]
        headline = page.locator("#totals p.key").inner_text()
        to_look_at = page.locator("#look-at").inner_text()
        statistics = page.locator("#item-statistics-table")
        statistics_box = statistics.bounding_box()
        statistics_rows = [row.locator("td").first.inner_text() for row in statistics.locator("tbody tr").all()]
        todo_mistakes = page.locator("#todo-mistakes-table tbody tr").count()
        page.screenshot(path=str(OUTPUT / "class-report.png"), full_page=True)
    assert visit.errors == []
    assert visit.requests == [url], "the page asked for something besides itself"
    assert len(charts) == 3  # the totals, the TODOs, the one threshold item graded
    assert all(box and box["width"] > 0 and box["height"] > 0 for box in charts), charts
    shown = {row[0]: int(row[2].split()[0]) for row in rows}
    assert shown == Counter(mistake_of(corpus_file) for corpus_file in STUDENTS.values())
    assert re.fullmatch(r"7 students: 6 graded, 1 without a grade\.", headline), headline
    assert f"week07/{HANGING}\tgather_final: values: timed out" in to_look_at
    assert f"week07/{MISSING}\tno results" in to_look_at
    selected = rubric.load().select(ONLY.split(","))
    assert statistics_box and statistics_box["width"] > 0 and statistics_box["height"] > 0
    assert statistics_rows == [item.name for item in selected.items], "facility and discrimination for every item"
    assert todo_mistakes == len(selected.functions)
    print(f"\nscreenshot {OUTPUT / 'class-report.png'}; misconception table {shown}; {headline}")


@pytest.mark.browser  # the roster graded above, then a browser start per width
@pytest.mark.parametrize("screen", [1100, 390])
def test_axe_finds_nothing_critical_serious_or_moderate_on_the_report_and_a_phone_scrolls_only_its_tables(
    report, screen
):
    with opened(report.as_uri(), screen) as visit:
        found = violations(visit.page)
        wide = visit.page.evaluate("document.documentElement.scrollWidth")
        landmarks = visit.page.locator("body > header, body > nav, body > main").count()
    assert found == [], f"at {screen} px:\n" + "\n".join(found)
    assert wide <= screen, f"the page is {wide} px wide on a {screen} px screen: only a table may scroll sideways"
    assert landmarks == 3

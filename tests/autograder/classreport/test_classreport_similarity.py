"""The class report links to similarity.html when `autograde similarity` wrote it beside the report or the gradings."""

from html.parser import HTMLParser
from pathlib import Path

import pytest

from autograder import classreport, rubric
from autograder.grading import writers
from autograder.grading.grade import failed_grading

SELECTED = rubric.load().select(["gather_final"])


class Links(HTMLParser):
    def __init__(self, html: str) -> None:
        super().__init__()
        self.links: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.links += [value for key, value in attrs if key == "href" and tag == "a"]


@pytest.fixture
def results(tmp_path: Path) -> Path:
    """A roster of one student, whatever their grading: the link does not depend on it."""
    folder = tmp_path / "my results"
    (folder / "ada").mkdir(parents=True)
    writers.write_results_json(failed_grading(SELECTED, "killed", 1.0), folder / "ada" / "results.json")
    return folder


def written(results: Path, out: Path) -> tuple[list[str], str]:
    """The report's links away from itself, and its Markdown summary."""
    classreport.write(results, out, SELECTED)
    links = Links((out / classreport.PAGE).read_text(encoding="utf-8")).links
    return [link for link in links if not link.startswith("#")], (out / classreport.TABLE).read_text(encoding="utf-8")


def test_it_links_to_the_similarity_page_written_beside_the_report(results, tmp_path):
    out = tmp_path / "gradebook"
    out.mkdir()
    (out / "similarity.html").write_text("<p>pairs</p>")
    links, summary = written(results, out)
    assert links == ["similarity.html"]
    assert "`similarity.html`, beside `report.html`" in summary


def test_it_links_to_the_similarity_page_beside_the_gradings_from_wherever_the_report_is(results, tmp_path):
    (results / "similarity.html").write_text("<p>pairs</p>")
    links, summary = written(results, tmp_path / "report")
    assert links == ["../my%20results/similarity.html"]
    assert (tmp_path / "report" / links[0].replace("%20", " ")).resolve() == (results / "similarity.html").resolve()
    assert "`../my results/similarity.html`" in summary


def test_without_a_similarity_page_it_links_nowhere_and_says_nothing_of_one(results, tmp_path):
    links, summary = written(results, tmp_path / "report")
    assert links == []
    assert "similarity" not in summary and "alike" not in summary

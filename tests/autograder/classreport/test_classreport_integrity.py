"""The class report's "Look at this code": each student's integrity notes, inert, for the instructor alone.

The roster is written, not graded: results.json as the grader writes it, integrity.json from the
analysis of small sources (one of them an attack submission's module, as grading copies it).
"""

import json
from pathlib import Path

import pytest

from autograder import cli, integrity, rubric
from autograder.classreport import data
from autograder.grading import writers
from autograder.grading.results import GradingResult, ItemResult
from autograder.locations import ROOT
from autograder.roster import gradebook, issues

SELECTED = rubric.load().select(["gather_final"])
HOSTILE_LINE = "import ctypes  # </pre><script>alert(3)</script>"
ATTACK = ROOT / "tests" / "attacks" / "submissions" / "kill_parent" / "exercises" / "padding.py"


def passed() -> GradingResult:
    items = [ItemResult(item.name, item.function, "", item.points, item.points, "passed") for item in SELECTED.items]
    return GradingResult(items, 3.0, {"grader_version": "0.1.0"})


def grading(folder: Path, notes: integrity.Notes | None) -> None:
    folder.mkdir()
    writers.write_all(passed(), folder)
    if notes is not None:
        integrity.write(notes, folder / integrity.FILE)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("results")
    grading(folder / "ann", integrity.analyse({"padding.py": ATTACK.read_bytes()}))
    grading(folder / "ben", integrity.analyse({"data.py": HOSTILE_LINE.encode() + b"\n"}))
    grading(folder / "cat", integrity.analyse({"padding.py": b"import torch\n"}))  # honest: no note
    grading(folder / "dan", None)  # graded before the notes existed, or by `autograde grade`
    return folder


def test_it_lists_the_students_with_notes_each_note_with_its_kind_and_line(results):
    report = data.build(results, SELECTED)
    assert [one.student for one in report.noted] == ["ann", "ben"]
    kill = next(note for note in report.noted[0].notes.notes if note.detail == "os.kill")
    assert kill.kind is integrity.Kind.PROCESS and ATTACK.read_text().splitlines()[kill.line - 1].strip() == kill.text


def test_the_page_shows_the_section_inert_and_the_terminal_counts_the_students(results, tmp_path, capsys):
    assert cli.main(["report", str(results), "--out", str(tmp_path), "--only", "gather_final"]) == 0
    assert "2 students with integrity notes" in capsys.readouterr().out
    page = (tmp_path / "report.html").read_text()
    section = page[page.index('<section id="integrity">') :]
    section = section[: section.index("</section>")]
    assert "Look at this code" in section and "never a penalty" in section
    assert "<script>" not in page and "&lt;/pre&gt;&lt;script&gt;alert(3)&lt;/script&gt;" in section
    assert "<code>data.py:1</code>" in section and "os.kill(os.getppid(), signal.SIGKILL)" in section
    assert integrity.Kind.PROCESS.describe in section
    assert "cat" not in section.split("students have notes")[1] and "dan" not in section


def test_the_misconception_table_and_the_gradebook_leave_the_notes_out(results, tmp_path):
    assert cli.main(["report", str(results), "--out", str(tmp_path), "--only", "gather_final"]) == 0
    assert "ctypes" not in (tmp_path / "misconceptions.md").read_text()
    cli.main(["gradebook", str(results), "--out", str(tmp_path / "book")])  # by the whole rubric: rows without grades
    assert (tmp_path / "book" / "gradebook.csv").is_file()
    assert not any("ctypes" in path.read_text() for path in (tmp_path / "book").iterdir() if path.is_file())


def test_the_students_feedback_issue_leaves_the_notes_out(results):
    for student in ("ann", "ben"):
        folder = results / student
        body = issues.issue_text(folder, gradebook.read_entry(folder, SELECTED))
        assert "ctypes" not in body and "os.kill" not in body and "integrity" not in body.lower()
        assert json.loads((folder / integrity.FILE).read_text())["notes"]  # the notes are there, beside it

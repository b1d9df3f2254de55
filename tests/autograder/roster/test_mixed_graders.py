"""A roster and its graders: grade-all's key follows the fingerprint; the gradebook, merge and report say when
the gradings of a roster were made by different graders."""

import csv
import json
import time
from pathlib import Path

import pytest
from support import build_submission

from autograder import cli, fingerprint, rubric
from autograder.classreport import data, page
from autograder.grading import writers
from autograder.grading.results import GradingResult, ItemResult
from autograder.roster import grade_all, gradebook, merge

NEW, OLD = "a" * 64, "b" * 64  # two graders' digests


def full_marks(stamp: str | None) -> GradingResult:
    """Every item passed, by the grader whose digest is `stamp` (None: a grading from before fingerprints)."""
    selected = rubric.load()
    items = [ItemResult(item.name, item.function, "", item.points, item.points, "passed") for item in selected.items]
    environment = {"fingerprint": {"digest": stamp, "versions": fingerprint.versions()}} if stamp else {}
    return GradingResult(items, 1.0, environment)


def roster(folder: Path, stamps: dict[str, str | None]) -> Path:
    for student, stamp in stamps.items():
        (folder / student).mkdir(parents=True)
        writers.write_results_json(full_marks(stamp), folder / student / "results.json")
    return folder


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """Three students graded by the new grader, two by an old one, one before fingerprints, one not graded."""
    folder = roster(tmp_path / "results", {"ann": NEW, "ben": NEW, "cy": NEW, "dee": OLD, "eve": OLD, "fay": None})
    (folder / "gil").mkdir()
    (folder / "gil" / "error").write_text("no commit before the deadline\n")
    return folder


def test_the_gradebook_has_a_column_with_each_gradings_fingerprint_in_short(mixed, tmp_path):
    gradebook.write(mixed, tmp_path / "book", rubric.load())
    with (tmp_path / "book" / "gradebook.csv").open(newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    short = fingerprint.SHORT
    assert [rows[name]["fingerprint"] for name in ("ann", "dee", "fay", "gil")] == [NEW[:short], OLD[:short], "", ""]


def test_the_gradebook_says_how_many_students_another_grader_graded(mixed, tmp_path):
    entries = gradebook.write(mixed, tmp_path / "book", rubric.load())
    warning = gradebook.mixed_graders([entry.fingerprint for entry in entries if entry.total is not None])
    assert warning.startswith("3 students were graded by another grader than the other 3 (fingerprint aaaaaaaaaaaa)")
    assert "bbbbbbbbbbbb for 2; none recorded for 1" in warning and "Run grade-all again" in warning
    assert warning in (tmp_path / "book" / "overview.md").read_text()


def test_a_roster_graded_by_one_grader_has_no_warning(tmp_path):
    folder = roster(tmp_path / "results", {"ann": NEW, "ben": NEW})
    gradebook.write(folder, tmp_path / "book", rubric.load())
    assert "another grader" not in (tmp_path / "book" / "overview.md").read_text()
    assert gradebook.mixed_graders([NEW, NEW]) == gradebook.mixed_graders([]) == ""
    assert gradebook.mixed_graders([NEW, OLD]).startswith("1 student was graded by another grader than the other 1")


def test_merge_says_when_the_newest_gradings_come_from_different_graders(tmp_path):
    first = roster(tmp_path / "first", {"ann": OLD, "ben": OLD})
    rerun = roster(tmp_path / "rerun", {"ben": NEW})
    picks = merge.merge([first, rerun], tmp_path / "merged")
    assert merge.mixed(picks, tmp_path / "merged").startswith("1 student was graded by another grader")
    regraded = roster(tmp_path / "regraded", {"ann": NEW})
    picks = merge.merge([first, rerun, regraded], tmp_path / "all")
    assert merge.mixed(picks, tmp_path / "all") == ""


def test_the_class_report_says_so_in_its_health_section(mixed):
    report = data.build(mixed, rubric.load())
    assert report.health.graders.startswith("3 students were graded by another grader")
    assert report.health.versions["fingerprint"] == {"aaaaaaaaaaaa": 3, "bbbbbbbbbbbb": 2, "none recorded": 1}
    assert "3 students were graded by another grader" in page.health(report)


def test_grade_alls_key_changes_with_the_graders_fingerprint(tmp_path, monkeypatch):
    submission, out, selected = tmp_path / "submissions" / "ann", tmp_path / "out", rubric.load()
    build_submission(submission)
    out.mkdir()
    (out / "results.json").write_text(json.dumps({"tests": []}))
    grade_all.record_outcome(submission, out, 0, time.monotonic(), selected, None)
    assert grade_all.up_to_date(submission, out, selected, None)
    own = fingerprint.fingerprint(selected.text)
    changed = fingerprint.Fingerprint(NEW, own.versions)  # what a changed check makes of it
    monkeypatch.setattr(grade_all, "fingerprint", lambda text: changed if text == selected.text else own)
    assert not grade_all.up_to_date(submission, out, selected, None)


def test_the_gradebook_merge_and_report_commands_say_it_on_the_terminal(mixed, tmp_path, capsys):
    assert cli.main(["gradebook", str(mixed), "--out", str(tmp_path / "book")]) == 0
    assert "3 students were graded by another grader" in capsys.readouterr().err
    assert cli.main(["report", str(mixed), "--out", str(tmp_path / "report")]) == 0
    assert "3 students were graded by another grader" in capsys.readouterr().err
    assert cli.main(["merge", str(mixed), "--out", str(tmp_path / "merged")]) == 0
    assert "3 students were graded by another grader" in capsys.readouterr().err
    one = roster(tmp_path / "one", {"ann": NEW})
    assert cli.main(["gradebook", str(one), "--out", str(tmp_path / "one-book")]) == 0
    assert "another grader" not in capsys.readouterr().err

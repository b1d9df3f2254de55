"""Each command by a course section's rubric (points, a threshold, late work), and the progress of long work."""

import csv
import json
import re
import zipfile
from pathlib import Path

import pytest
from support import rubric_file

from autograder import cli, rubric
from autograder.grading import rubric_record, writers
from autograder.grading.results import GradingResult, ItemResult
from autograder.release import public_mistakes, student_repository

RAISED = ("SequenceClassifier", "learns_the_task")  # the item a section's rubric raises: a point more, a higher bar
GRADER = rubric.load()
OWN = {(item.function, item.aspect): item.points for item in GRADER.items}  # the grader's points
POINTS = OWN[RAISED] + 1  # the section's
THRESHOLD = round(GRADER.recipe(*RAISED).threshold + 0.02, 2)  # the section's
LATE = '[late]\nper_day = 0.10\nmax_days = 3\nkeep = "latest"\n'
POLICY = "Late work (the rubric's [late]): 10% of the score per day late"


@pytest.fixture
def section(tmp_path: Path) -> Path:
    """A section's rubric: one item a point more and its threshold 0.02 higher than the grader's, a [late] policy."""
    path = rubric_file(tmp_path / "section.toml", LATE, lambda f, a: POINTS if (f, a) == RAISED else OWN[(f, a)])
    text = path.read_text()
    start = text.index("[thresholds.{}.{}]".format(*RAISED))
    raised = re.sub(r"threshold = [0-9.]+\n", f"threshold = {THRESHOLD}\n", text[start:], count=1)
    path.write_text(text[:start] + raised)
    assert rubric.load(path).recipe(*RAISED).threshold == THRESHOLD
    return path


def graded_roster(results: Path, by: rubric.Rubric) -> Path:
    """Two students graded by `by`, as grade-all leaves them: their results.json record the rubric."""
    for student, committed in (("ada", "2026-12-04T20:00:00+01:00"), ("bo", "2026-12-06T11:59:00+01:00")):
        items = [ItemResult(i.name, i.function, "", i.points, i.points, "passed", "") for i in by.items]
        folder = results / student
        folder.mkdir(parents=True)
        grading = GradingResult(items, 1.0, {rubric_record.KEY: rubric_record.record(by)})
        writers.write_results_json(grading, folder / "results.json")
        for name, text in {"commit-time": committed, "deadline": "2026-12-04T23:59:00+01:00"}.items():
            (folder / name).write_text(text + "\n")
    return results


def test_the_gradebook_without_rubric_grades_by_the_one_that_graded(section, tmp_path):
    results = graded_roster(tmp_path / "results", rubric.load(section))
    assert cli.main(["gradebook", str(results), "--out", str(tmp_path / "book")]) == 0
    overview = (tmp_path / "book" / "overview.md").read_text()
    assert POLICY in overview and "Total out of 101" in overview
    rows = {row["student"]: row for row in csv.DictReader((tmp_path / "book" / "gradebook.csv").open())}
    assert rows["bo"]["days_late"] == "2" and rows["bo"]["total"] == "80.8"  # 101, less 2 days at 10 %


def test_the_report_without_rubric_shows_the_late_policy_of_the_rubric_that_graded(section, tmp_path):
    results = graded_roster(tmp_path / "results", rubric.load(section))
    assert cli.main(["report", str(results), "--out", str(tmp_path / "report")]) == 0
    assert POLICY in (tmp_path / "report" / "report.html").read_text()


@pytest.mark.parametrize("command", ["gradebook", "report"])
def test_a_rubric_other_than_the_one_that_graded_is_refused_in_one_line(section, tmp_path, capsys, command):
    results = graded_roster(tmp_path / "results", rubric.load(section))
    assert cli.main([command, str(results), "--out", str(tmp_path / "out"), "--rubric", str(rubric.RUBRIC)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("autograde: --rubric ") and "is not the rubric these gradings were graded by" in error
    assert error.count("\n") == 1 and not (tmp_path / "out").exists()


def test_merge_refuses_gradings_by_two_rubrics_and_writes_nothing(section, tmp_path, capsys):
    first = graded_roster(tmp_path / "first", rubric.load())
    second = graded_roster(tmp_path / "second", rubric.load(section))
    (second / "ada").rename(second / "cy")
    assert cli.main(["merge", str(first), str(second), "--out", str(tmp_path / "merged")]) == 2
    assert "graded by 2 different rubrics" in capsys.readouterr().err and not (tmp_path / "merged").exists()


def test_the_gradescope_bundle_grades_by_the_sections_rubric(section, tmp_path):
    assert cli.main(["gradescope", str(tmp_path / "autograder.zip"), "--rubric", str(section)]) == 0
    with zipfile.ZipFile(tmp_path / "autograder.zip") as bundle:
        assert bundle.read("grader/autograder/rubric.toml").decode() == section.read_text()


def test_calibrate_lists_the_sections_threshold_training_nothing(section, capsys):
    assert cli.main(["calibrate", "--list", "--rubric", str(section)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith(f"SequenceClassifier: learns the task: threshold {THRESHOLD} ") for line in lines)
    assert len(lines) == len(rubric.load(section).recipes)


def test_the_nbgrader_course_gives_the_sections_points_and_threshold(section, tmp_path):
    assert cli.main(["nbgrader", str(tmp_path / "course"), "--rubric", str(section)]) == 0
    notebook = json.loads((tmp_path / "course" / "source" / "week07" / "classifier.ipynb").read_text())
    cell = next(
        c
        for c in notebook["cells"]
        if c["metadata"]["nbgrader"]["grade_id"] == "test_SequenceClassifier_learns_the_task"
    )
    assert cell["metadata"]["nbgrader"]["points"] == POINTS
    assert f"threshold = {THRESHOLD}" in "".join(cell["source"]) and "### BEGIN HIDDEN TESTS" in "".join(cell["source"])


def fake_recording(tmp_path: Path, tests: int) -> public_mistakes.Values:
    """What the recording child reports (a line per test), passed on as the real recording does; no values."""
    lines = tmp_path / "progress.txt"
    lines.write_text(f"total {tests}\n" + "".join(f"done exercises/tests/test_a.py::test_{n}\n" for n in range(tests)))
    public_mistakes._report(lines, -1, public_mistakes._reporting.get())
    return public_mistakes.Values({}, {}, {})


def test_release_writes_the_sections_points_and_threshold_and_reports_its_progress(
    section, tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(public_mistakes, "values", lambda: fake_recording(tmp_path, 40))
    assert cli.main(["release", str(tmp_path / "released"), "--rubric", str(section)]) == 0
    readme = (tmp_path / "released" / "README.md").read_text()
    assert re.search(rf"learns the task.*\| {POINTS:g} \|", readme) and str(THRESHOLD) in readme
    settings = json.loads((tmp_path / "released" / student_repository.CHECK_TRAINING / "settings.json").read_text())
    assert settings["items"]["SequenceClassifier: learns the task"]["threshold"] == THRESHOLD
    captured = capsys.readouterr()
    counts = re.findall(r": (\d+) of 40 \(", captured.err)  # a line at each tenth: 40 tests, a line every 4
    assert counts == [str(done) for done in range(0, 41, 4)] and captured.err.count("test_a.py::test_39") == 1
    assert re.search(r"took \d", captured.err) and re.search(r"\(\d+ files\) in \d", captured.out)


@pytest.mark.parametrize("command", [["release", "OUT"], ["gradescope", "OUT"], ["nbgrader", "OUT"], ["calibrate"]])
def test_every_command_that_writes_for_students_refuses_a_bad_rubric_in_one_line_writing_nothing(
    tmp_path, capsys, command
):
    bad = rubric_file(tmp_path / "section.toml", '[late]\nper_day = 0.10\nmax_days = -2\nkeep = "latest"\n')
    argv = [str(tmp_path / "out") if part == "OUT" else part for part in command]
    assert cli.main([*argv, "--rubric", str(bad)]) == 2
    error = capsys.readouterr().err
    assert error == f"autograde: {bad}: late.max_days must be a whole number of days, at least 0, not -2\n"
    assert not (tmp_path / "out").exists()

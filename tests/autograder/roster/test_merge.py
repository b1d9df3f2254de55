"""`autograde merge`: gradings from several runs, each student's newest kept."""

from pathlib import Path

import pytest

from autograder import cli, rubric
from autograder.grading import writers
from autograder.grading.grade import failed_grading
from autograder.grading.results import Failure
from autograder.roster import merge, shard_job, shards


def grading(source: Path, student: str, graded_at: str | None, score: str) -> Path:
    folder = source / student
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(f'{{"score": {score}}}\n')
    if graded_at is not None:
        (folder / "graded-at").write_text(graded_at + "\n")
    return folder


def score(folder: Path) -> str:
    return (folder / "results.json").read_text().split(": ")[1].rstrip("}\n")


@pytest.fixture
def runs(tmp_path: Path) -> list[Path]:
    first, rerun = tmp_path / "first", tmp_path / "rerun"
    grading(first, "course__alice", "2026-12-05T08:00:00+00:00", "40")
    grading(first, "course__bob", "2026-12-05T08:00:00+00:00", "70")
    grading(first, "course__cy", None, "10")
    grading(first, "course__dee", "2026-12-05T08:00:00+00:00", "55")
    grading(rerun, "course__alice", "2026-12-05T10:30:00+01:00", "90")  # 09:30 UTC: newer
    grading(rerun, "course__bob", "2026-12-05T08:30:00+01:00", "20")  # 07:30 UTC: older than the first run's
    grading(rerun, "course__cy", "not a time", "30")  # unreadable, like none: the later source wins the tie
    grading(rerun, "course__dee", "2026-12-05T08:00:00+00:00", "60")  # the same moment: the later source wins
    return [first, rerun]


def test_it_keeps_each_students_newest_grading_by_its_time_with_offsets(runs, tmp_path):
    picks = merge.merge(runs, tmp_path / "merged")
    merged = {pick.student: score(tmp_path / "merged" / pick.student) for pick in picks}
    assert merged == {"course__alice": "90", "course__bob": "70", "course__cy": "30", "course__dee": "60"}
    assert {pick.student: pick.others for pick in picks} == dict.fromkeys(merged, 1)
    assert (tmp_path / "merged" / "course__alice" / "graded-at").exists(), "the whole folder is copied"


def test_it_keeps_a_student_graded_in_one_run_only(tmp_path):
    grading(tmp_path / "a", "course__alice", "2026-12-05T08:00:00+00:00", "40")
    grading(tmp_path / "b", "course__bob", None, "70")
    assert [pick.student for pick in merge.merge([tmp_path / "a", tmp_path / "b"], tmp_path / "out")] == [
        "course__alice",
        "course__bob",
    ]


def test_it_never_writes_over_a_folder_that_holds_something(runs, tmp_path):
    (tmp_path / "merged").mkdir()
    (tmp_path / "merged" / "notes.txt").write_text("mine\n")
    with pytest.raises(merge.MergeError, match="is not empty"):
        merge.merge(runs, tmp_path / "merged")
    with pytest.raises(merge.MergeError, match="is one of the sources"):
        merge.merge(runs, runs[0])
    assert (tmp_path / "merged" / "notes.txt").read_text() == "mine\n"


def test_its_command_merges_and_exits_2_with_the_reason_on_a_missing_source(runs, tmp_path, capsys):
    assert cli.main(["merge", *map(str, runs), "--out", str(tmp_path / "merged")]) == 0
    assert "4 students, the newest grading of each (4 older ones left out)" in capsys.readouterr().out
    assert cli.main(["merge", str(tmp_path / "nowhere"), "--out", str(tmp_path / "other")]) == 2
    assert f"RESULTS does not exist: {tmp_path / 'nowhere'}" in capsys.readouterr().err


def test_it_names_every_student_whose_newest_grading_gives_no_grade_with_the_reason(runs, tmp_path, capsys):
    cut = runs[1] / "course__eve"
    cut.mkdir()
    (cut / "error").write_text(shard_job.CUT + "\n")
    (runs[1] / "course__fay").mkdir()  # nothing recorded at all: its grading was cut
    failed = runs[1] / "course__gus"
    failed.mkdir()
    selected = rubric.load().select(["gather_final"])
    writers.write_all(failed_grading(selected, "the suites did not run", 1.0, failure=Failure.GRADER_ERROR), failed)
    roster = tmp_path / "roster.txt"
    roster.write_text("course/alice\ncourse/eve\ncourse/hal\n")  # hal's shard uploaded nothing
    assert cli.main(["merge", *map(str, runs), "--out", str(tmp_path / "merged"), "--roster", str(roster)]) == 0
    out = capsys.readouterr().out
    assert f"  no grade for course/hal: {shards.NOTHING_UPLOADED}\n" in out
    assert f"  no grade for course__eve: {shard_job.CUT}\n" in out
    assert "  no grade for course__fay: no results: its grading was cut (no results.json)\n" in out
    assert "  no grade for course__gus: not graded: grader error (grader error in gather_final: " in out
    assert "4 student(s) without a grade" in out and "course__alice" not in out

"""The modules a shard keeps for the similarity page, and the gradebook job's pick of those its gradings graded."""

import os
from pathlib import Path

import pytest
from support import EXERCISES, SOLUTIONS

from autograder import rubric
from autograder.roster import modules

WEEK = sorted(path.name for path in EXERCISES.glob("*.py"))


def checked_out(submissions: Path, results: Path, name: str, commit: str | None = "c0ffee") -> Path:
    """A student's checkout with the reference's modules, recorded at `commit` (None: nothing checked out)."""
    folder = submissions / name / "exercises"
    folder.mkdir(parents=True)
    for module in WEEK:
        (folder / module).write_bytes((SOLUTIONS / module).read_bytes())
    (results / name).mkdir(parents=True)
    if commit:
        (results / name / "commit").write_text(commit + "\n")
    return folder


@pytest.fixture
def shard(tmp_path: Path) -> dict:
    submissions, results = tmp_path / "submissions", tmp_path / "results"
    ada = checked_out(submissions, results, "course__ada")
    for hostile in ("<script>.py", "evil\n.py", "notes.txt", "padding.py.bak"):  # names only the student chose
        (ada / hostile).write_text("x = 1\n")
    bob = checked_out(submissions, results, "course__bob")
    (bob / "padding.py").unlink()
    (bob / "padding.py").symlink_to("/etc/passwd")
    (bob / "recurrence.py").write_text("x = 1\n" * (rubric.load().limits.similarity_kb * 1024 // 6 + 1))
    checked_out(submissions, results, "course__cy", commit=None)  # its clone failed: nothing graded
    checked_out(submissions, results, "course__ada@on-time", commit="beef")  # keep = "better"'s other checkout
    dee = checked_out(submissions, results, "course__dee")
    os.rename(dee, dee.with_name("elsewhere"))
    dee.symlink_to(dee.with_name("elsewhere"))
    out = tmp_path / "modules"
    return {"submissions": submissions, "results": results, "out": out}


def test_it_keeps_the_week_modules_of_each_student_checked_out_with_their_commit(shard):
    assert modules.keep(shard["submissions"], shard["results"], shard["out"]) == 3
    out = shard["out"]
    assert sorted(path.name for path in out.iterdir()) == ["course__ada", "course__bob", "course__dee"]
    assert sorted(path.name for path in (out / "course__ada" / "exercises").iterdir()) == WEEK
    assert (out / "course__ada" / "exercises" / "recurrence.py").read_bytes() == (
        SOLUTIONS / "recurrence.py"
    ).read_bytes()
    assert (out / "course__ada" / "commit").read_text() == "c0ffee\n"
    assert not (out / "course__ada" / modules.LEFT_OUT).exists()


def test_no_file_name_a_student_chose_reaches_the_kept_modules(shard):
    modules.keep(shard["submissions"], shard["results"], shard["out"])
    written = {path.relative_to(shard["out"]).as_posix() for path in shard["out"].rglob("*")}
    kept = ("course__ada", "course__bob", "course__dee")
    allowed = {f"{student}/exercises/{module}" for student in kept for module in WEEK}
    allowed |= {
        f"{student}{name}" for student in kept for name in ("", "/exercises", "/commit", f"/{modules.LEFT_OUT}")
    }
    assert written <= allowed
    assert f"course__ada/exercises/{WEEK[0]}" in written


def test_a_link_or_a_module_too_big_is_left_out_with_why_and_the_others_kept(shard):
    modules.keep(shard["submissions"], shard["results"], shard["out"])
    bob = shard["out"] / "course__bob"
    assert sorted(path.name for path in (bob / "exercises").iterdir()) == sorted(
        set(WEEK) - {"padding.py", "recurrence.py"}
    )
    left_out = (bob / modules.LEFT_OUT).read_text().splitlines()
    assert left_out == [
        "exercises/padding.py: it is a symbolic link, and the grader never follows one",
        f"exercises/recurrence.py: over the {rubric.load().limits.similarity_kb} KB kept of a module",
    ]
    dee = shard["out"] / "course__dee"
    assert list((dee / "exercises").iterdir()) == [] and (dee / modules.LEFT_OUT).read_text().strip()


def test_the_gradebook_job_picks_the_modules_of_the_commit_each_kept_grading_graded(tmp_path):
    new, previous, results = tmp_path / "new", tmp_path / "previous", tmp_path / "results"
    for source, student, commit, text in [
        (previous, "course__ada", "a1", "old ada"),
        (new, "course__ada", "a2", "new ada"),  # re-graded in this run
        (previous, "course__bob", "b1", "bob"),  # not re-graded: the previous run's
        (new, "course__cy", "c2", "cy"),  # this run's modules, but the grading kept is another commit's
    ]:
        (source / student / "exercises").mkdir(parents=True)
        (source / student / "exercises" / "padding.py").write_text(text)
        (source / student / "commit").write_text(commit + "\n")
    for student, commit in [("course__ada", "a2"), ("course__bob", "b1"), ("course__cy", "c1"), ("course__dan", "")]:
        (results / student).mkdir(parents=True)
        if commit:
            (results / student / "commit").write_text(commit + "\n")
    out = tmp_path / "roster"
    assert modules.pick(results, [new, previous], out) == ["course__cy", "course__dan"]
    assert sorted(path.name for path in out.iterdir()) == ["course__ada", "course__bob"]
    assert (out / "course__ada" / "exercises" / "padding.py").read_text() == "new ada"
    assert (out / "course__bob" / "exercises" / "padding.py").read_text() == "bob"
    assert (out / "course__ada" / "commit").read_text() == "a2\n"  # what a later re-run's pick matches


def test_its_command_keeps_then_picks_and_says_how_many(shard, capsys):
    results, out = str(shard["results"]), str(shard["out"])
    assert modules.main(["keep", str(shard["submissions"]), "--results", results, "--out", out]) == 0
    (shard["results"] / "course__ada@on-time" / "commit").unlink()  # `finish` nests it in ada's folder
    (shard["results"] / "course__ada@on-time").rmdir()
    roster, missing = shard["out"].parent / "roster", shard["out"].parent / "no-previous-run"
    assert modules.main(["pick", results, "--from", out, str(missing), "--out", str(roster)]) == 0
    said = capsys.readouterr().out
    assert "kept the week's modules of 3 students" in said
    assert "3 students' modules to compare" in said and "no modules kept for the grading of 1: course__cy" in said

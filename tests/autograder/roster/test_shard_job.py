"""The shard job's commit choice: the last commit before the deadline, or with the rubric's [late] the last
within max_days (and with keep = "better" the last on-time one beside it), each recorded with its time."""

import os
import subprocess
from pathlib import Path

import pytest
from support import rubric_file

from autograder import rubric
from autograder.roster import gradebook, shard_job

DEADLINE = "2026-12-04T23:59:00+01:00"
TIMES = {  # commit times around the deadline
    "on time": "2026-12-04T20:00:00+01:00",
    "20 hours late": "2026-12-05T19:59:00+01:00",
    "1.5 days late": "2026-12-06T11:59:00+01:00",
    "4 days late": "2026-12-08T23:59:00+01:00",
}
STUDENTS = {  # each student's commits, oldest first
    "ada": ["on time", "4 days late"],
    "bo": ["1.5 days late"],
    "cy": ["4 days late"],
    "dee": ["on time", "20 hours late"],
}


def git(repository: Path, *arguments: str, when: str | None = None) -> str:
    dates = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when} if when else {}
    identity = ["-c", "user.name=Student", "-c", "user.email=student@example.org", "-c", "commit.gpgsign=false"]
    done = subprocess.run(
        ["git", *identity, *arguments], cwd=repository, env={**os.environ, **dates}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture(scope="module")
def remotes(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One repository per student under course/, a commit at each of their times (its file says which)."""
    root = tmp_path_factory.mktemp("remotes")
    commits = {}
    for student, times in STUDENTS.items():
        repository = root / "course" / student
        (repository / "exercises").mkdir(parents=True)
        git(repository, "init", "--quiet", "--initial-branch=main")
        for when in times:
            (repository / "exercises" / "padding.py").write_text(f"# {when}\n")
            git(repository, "add", "-A")
            git(repository, "commit", "--quiet", "-m", when, when=TIMES[when])
            commits[student, when] = git(repository, "rev-parse", "HEAD")
    return {"server": f"file://{root}", "commits": commits}


def checked_out(remotes: dict, tmp_path: Path, student: str, late: rubric.Late | None) -> tuple[str, Path, Path]:
    """The shard job's checkout in tmp_path, given relative folders as the workflow gives them."""
    previous = Path.cwd()
    os.chdir(tmp_path)
    try:
        error = shard_job.checkout(
            f"course/{student}", DEADLINE, remotes["server"], Path("submissions"), Path("results"), late
        )
    finally:
        os.chdir(previous)
    return error, tmp_path / "submissions" / f"course__{student}", tmp_path / "results" / f"course__{student}"


def text(folder: Path, name: str) -> str:
    return (folder / name).read_text().strip()


def policy(tmp_path: Path, keep: str) -> rubric.Late:
    section = f'[late]\nper_day = 0.10\nmax_days = 3\nkeep = "{keep}"\n'
    return rubric.load(rubric_file(tmp_path / "section.toml", section)).late


def test_without_late_it_grades_the_last_commit_before_the_deadline_as_before(remotes, tmp_path):
    error, submission, record = checked_out(remotes, tmp_path, "ada", None)
    assert error == "" and text(record, "commit") == remotes["commits"]["ada", "on time"]
    assert text(record, "commit-time") == TIMES["on time"] and not (record / "days-late").exists()
    assert text(submission / "exercises", "padding.py") == "# on time"
    error, submission, record = checked_out(remotes, tmp_path, "bo", None)
    assert error == text(record, "error") == f"no commit before the deadline {DEADLINE}" and not submission.exists()


@pytest.mark.parametrize("keep", rubric.KEEP)
def test_with_late_it_grades_the_last_commit_within_max_days_and_records_how_late(remotes, tmp_path, keep):
    late = policy(tmp_path, keep)
    error, submission, record = checked_out(remotes, tmp_path, "bo", late)
    assert error == "" and text(record, "commit") == remotes["commits"]["bo", "1.5 days late"]
    assert (text(record, "commit-time"), text(record, "days-late")) == (TIMES["1.5 days late"], "2")
    assert text(submission / "exercises", "padding.py") == "# 1.5 days late"
    assert not shard_job.beside(submission).exists(), "nothing on time to grade beside it"
    error, submission, record = checked_out(remotes, tmp_path, "ada", late)
    assert error == "" and text(record, "commit") == remotes["commits"]["ada", "on time"], "4 days is too late"
    assert text(record, "days-late") == "0"


def test_with_late_a_student_whose_only_commit_is_beyond_max_days_has_nothing_to_grade(remotes, tmp_path):
    late = policy(tmp_path, "latest")
    error, submission, record = checked_out(remotes, tmp_path, "cy", late)
    assert error == text(record, "error") == f"no commit within {late.max_days} days of the deadline {DEADLINE}"
    assert not submission.exists()
    assert shard_job.failures(record.parent, rubric.load()) == [], "nothing to grade is not a failed job"


def test_with_keep_better_it_checks_out_the_last_on_time_commit_beside_the_late_one(remotes, tmp_path):
    error, submission, record = checked_out(remotes, tmp_path, "dee", policy(tmp_path, "better"))
    beside, on_time = shard_job.beside(submission), shard_job.beside(record)
    assert error == "" and text(record, "commit") == remotes["commits"]["dee", "20 hours late"]
    assert text(record, "days-late") == "1" and text(submission / "exercises", "padding.py") == "# 20 hours late"
    assert text(on_time, "commit") == remotes["commits"]["dee", "on time"] and text(on_time, "days-late") == "0"
    assert (text(on_time, "student"), text(on_time, "deadline")) == ("course/dee", DEADLINE)
    assert text(beside / "exercises", "padding.py") == "# on time"
    assert sorted(path.name for path in beside.iterdir()) == ["exercises"], "its files only, no link to .git"
    assert sorted(path.name for path in submission.iterdir()) == [".git", "exercises"], "nothing added to the late one"


def test_with_keep_latest_it_checks_out_only_the_last_commit(remotes, tmp_path):
    error, submission, record = checked_out(remotes, tmp_path, "dee", policy(tmp_path, "latest"))
    assert error == "" and text(record, "commit") == remotes["commits"]["dee", "20 hours late"]
    assert not shard_job.beside(submission).exists() and not shard_job.beside(record).exists()


def test_finish_moves_each_on_time_grading_into_its_students_folder_and_stamps_both(remotes, tmp_path):
    checked_out(remotes, tmp_path, "dee", policy(tmp_path, "better"))
    results = tmp_path / "results"
    assert shard_job.finish(results) == 0
    assert [path.name for path in results.iterdir()] == ["course__dee"]
    nested = results / "course__dee" / gradebook.ON_TIME
    assert text(nested, "commit") == remotes["commits"]["dee", "on time"]
    assert text(nested, "graded-at") == text(results / "course__dee", "graded-at")


def test_finish_records_why_a_student_checked_out_has_no_results_and_leaves_the_others_alone(tmp_path):
    results = tmp_path / "results"
    for name in ("cut", "graded", "nothing"):
        (results / name).mkdir(parents=True)
    (results / "graded" / "results.json").write_text("{}\n")
    (results / "nothing" / "error").write_text("no commit before the deadline 2026-12-04T23:59:00+00:00\n")
    assert shard_job.finish(results) == 0
    assert text(results / "cut", "error") == shard_job.CUT
    assert not (results / "graded" / "error").exists()
    assert text(results / "nothing", "error").startswith("no commit before")
    assert [failed.repository for failed in shard_job.failures(results, rubric.load())] == ["cut", "graded"]

"""`grade-all`'s bookkeeping: every student gets an outcome whatever one grading did, a failure that is not the
student's is tried again alone once and never stands as a grade.

The gradings here are scripted (no worker): each writes the results.json its submission's `script` file asks
for, so that a grader error, a crash or a full disk can be made to happen to one student among others."""

import contextlib
import csv
import errno
import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from autograder import commands, rubric
from autograder.grading import writers
from autograder.grading.grade import failed_grading
from autograder.grading.results import Failure, GradingResult, ItemResult
from autograder.roster import grade_all, gradebook

ONLY = ["gather_final"]


def scripted(submission: Path, out: Path, only: list[str] | None) -> int:
    """A grading without a worker: what `submission/script` says, line by line for each attempt (the last line
    for every later one): `full`, `grader error`, `not started`, `timeout` (the student's call), `crash`."""
    lines = (submission / "script").read_text().split()
    attempts = out.parent.parent / "attempts"
    attempts.mkdir(exist_ok=True)
    running = [path.stem for path in attempts.glob("*.running")]
    (attempts / f"{submission.name}.running").touch()
    with (attempts / f"{submission.name}.log").open("a") as log:
        log.write(",".join(running) + "\n")  # who else was grading when this attempt started
    done = len((attempts / f"{submission.name}.log").read_text().splitlines())
    action = lines[min(done, len(lines)) - 1]
    (attempts / f"{submission.name}.running").unlink()
    return act(action, out, rubric.load().select(only))


FAILURES = {"not-started": Failure.NOT_STARTED, "timeout": Failure.TIMEOUT}  # an item's failure, scripted


def act(action: str, out: Path, selected: rubric.Rubric) -> int:
    """Do what a grading would: die, refuse as the grader does (exit 2), or write its items."""
    if action == "crash":
        os.kill(os.getpid(), signal.SIGKILL)
    if action == "fill":  # full marks, then the disk its results are on filled by a file it leaves behind
        status = act("full", out, selected)
        fill(out / "ballast")
        return status
    if action == "grader-error":  # the hidden suites did not run: grade_by's GradingError
        writers.write_all(failed_grading(selected, "the suites did not run", 0.1, failure=Failure.GRADER_ERROR), out)
        return commands.EXIT_ERROR
    failure = FAILURES.get(action)
    items = [ItemResult(item.name, item.function, "", item.points, item.points, "passed") for item in selected.items]
    if failure:
        for item in items:
            item.score, item.status, item.failure = 0.0, "failed", failure
            item.feedback = f"{item.function} did not finish ({failure})"
    writers.write_all(GradingResult(items, 0.1), out)
    return commands.EXIT_OK


def fill(path: Path) -> None:
    """Write `path` until its file system is full (large blocks, then small ones: not a byte left)."""
    with path.open("wb", buffering=0) as ballast:
        for block in (1 << 16, 1 << 10, 1):
            with contextlib.suppress(OSError):
                while True:
                    ballast.write(b"x" * block)


def roster(folder: Path, scripts: dict[str, str]) -> Path:
    for name, script in scripts.items():
        (folder / name).mkdir(parents=True)
        (folder / name / "script").write_text(script)
    return folder


def grade(folder: Path, out: Path, jobs: int = 2, **options) -> dict[str, grade_all.SubmissionOutcome]:
    outcomes = grade_all.grade_all(folder, out, jobs, scripted, only=ONLY, **options)
    return {outcome.student: outcome for outcome in outcomes}


def rows(out: Path) -> dict[str, dict[str, str]]:
    gradebook.write(out, out, rubric.load().select(ONLY))
    with open(out / "gradebook.csv", newline="") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def test_it_tries_a_grading_that_failed_for_the_graders_reasons_again_alone_after_the_others(tmp_path):
    folder = roster(tmp_path / "submissions", {"ada": "full", "bob": "grader-error full", "cy": "full", "dee": "full"})
    outcomes = grade(folder, tmp_path / "out")
    assert {name: outcome.status for name, outcome in outcomes.items()} == dict.fromkeys(outcomes, "graded")
    assert [name for name, outcome in outcomes.items() if outcome.retried] == ["bob"]
    attempts = (tmp_path / "attempts" / "bob.log").read_text().splitlines()
    assert len(attempts) == 2 and attempts[1] == "", "the second attempt runs with no other grading"
    assert list(outcomes)[-1] == "bob"  # after the others
    full = str(rubric.load().select(ONLY).total)
    assert {row["total"] for row in rows(tmp_path / "out").values()} == {full.removesuffix(".0")}


@pytest.mark.parametrize("script", ["grader-error", "not-started", "crash"])
def test_it_never_lets_a_failure_that_is_not_the_students_stand_as_a_grade(tmp_path, script):
    folder = roster(tmp_path / "submissions", {"ada": "full", "bob": script})
    outcomes = grade(folder, tmp_path / "out")
    assert outcomes["ada"].status == "graded"
    assert outcomes["bob"].status == "grader error" and outcomes["bob"].retried
    assert len((tmp_path / "attempts" / "bob.log").read_text().splitlines()) == 2
    row = rows(tmp_path / "out")["bob"]
    assert row["total"] == "" and row["error"].startswith("not graded: grader error"), row
    assert not (tmp_path / "out" / "bob" / grade_all.KEY_FILE).exists()


def test_it_lets_the_students_own_timeout_stand_and_does_not_try_it_again(tmp_path):
    folder = roster(tmp_path / "submissions", {"bob": "timeout"})
    outcomes = grade(folder, tmp_path / "out")
    assert outcomes["bob"].status == "graded" and not outcomes["bob"].retried
    assert rows(tmp_path / "out")["bob"]["total"] == "0"


def test_it_records_a_full_disk_in_its_own_bookkeeping_as_that_students_grader_error_and_goes_on(tmp_path, monkeypatch):
    folder = roster(tmp_path / "submissions", {name: "full" for name in ("ada", "bob", "cy", "dee")})
    write_key = grade_all.write_key

    def full_disk_for_bob(out: Path, key: str) -> None:
        if out.name == "bob":
            raise OSError(errno.ENOSPC, "No space left on device")
        write_key(out, key)

    monkeypatch.setattr(grade_all, "write_key", full_disk_for_bob)
    outcomes = grade(folder, tmp_path / "out")
    assert {name: outcome.status for name, outcome in outcomes.items() if name != "bob"} == dict.fromkeys(
        ("ada", "cy", "dee"), "graded"
    )
    assert outcomes["bob"].status == "grader error" and outcomes["bob"].retried
    assert "No space left on device" in outcomes["bob"].detail
    assert not (tmp_path / "out" / "bob" / grade_all.KEY_FILE).exists()
    assert all((tmp_path / "out" / name / grade_all.KEY_FILE).exists() for name in ("ada", "cy", "dee"))
    book = rows(tmp_path / "out")
    assert book["bob"]["total"] == "" and "No space left on device" in book["bob"]["error"]
    assert all(book[name]["total"] != "" for name in ("ada", "cy", "dee"))


def test_it_records_a_grading_that_could_not_start_and_goes_on(tmp_path, monkeypatch):
    folder = roster(tmp_path / "submissions", {"ada": "full", "bob": "full"})
    start = grade_all._start

    def no_room_for_bob(grade, submission, out, only, warm):
        if submission.name == "bob":
            raise OSError(errno.ENOSPC, "No space left on device")
        return start(grade, submission, out, only, warm)

    monkeypatch.setattr(grade_all, "_start", no_room_for_bob)
    outcomes = grade(folder, tmp_path / "out")
    assert outcomes["ada"].status == "graded"
    assert outcomes["bob"].status == "grader error" and "could not start" in outcomes["bob"].detail


def test_it_records_every_student_a_spent_time_budget_left_ungraded_as_not_graded(tmp_path):
    folder = roster(tmp_path / "submissions", {"ada": "full", "bob": "full"})
    outcomes = grade(folder, tmp_path / "out", budget=0)
    assert {outcome.status for outcome in outcomes.values()} == {"grader error"}
    assert all("time budget ran out" in outcome.detail for outcome in outcomes.values())
    book = rows(tmp_path / "out")
    assert set(book) == {"ada", "bob"} and all(
        row["error"].startswith("not graded: grader error") for row in book.values()
    )


def test_its_command_names_the_students_without_a_grade_and_exits_3(tmp_path, monkeypatch, capsys):
    folder = roster(tmp_path / "submissions", {"ada": "full", "bob": "grader-error"})
    real = grade_all.grade_all
    monkeypatch.setattr(grade_all, "grade_all", lambda *args, **kwargs: real(*args[:3], scripted, *args[4:], **kwargs))
    monkeypatch.setattr(commands.sandbox, "available", lambda: commands.sandbox.Isolation())
    status = commands.grade_all_command(folder, tmp_path / "out", 2, False, ONLY, require_isolation=False)
    err = capsys.readouterr().err
    assert status == commands.EXIT_NOT_GRADED == 3
    assert "grader error for bob: " in err and "1 student(s) not graded because of a grader error" in err
    assert (
        "grader error"
        in json.loads((tmp_path / "out" / "bob" / "results.json").read_text())["tests"][0]["extra_data"]["failure"]
    )


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 2 MB tmpfs of its own (root), where grade-all keeps its results: full for real, not by an injected error."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)], check=True)
    yield disk
    subprocess.run(["umount", "--lazy", str(disk)], check=True)


def test_a_real_full_disk_costs_grades_but_every_student_gets_an_outcome_and_is_named(
    tmp_path, small_disk, monkeypatch, capsys
):
    folder = roster(tmp_path / "submissions", {"ada": "full", "bob": "fill", "cy": "full", "dee": "full"})
    real = grade_all.grade_all
    monkeypatch.setattr(grade_all, "grade_all", lambda *args, **kwargs: real(*args[:3], scripted, *args[4:], **kwargs))
    monkeypatch.setattr(commands.sandbox, "available", lambda: commands.sandbox.Isolation())
    out = small_disk / "out"
    status = commands.grade_all_command(folder, out, 1, False, ONLY, require_isolation=False)
    err = capsys.readouterr().err
    assert status != commands.EXIT_OK
    assert "No space left on device" in err
    assert (out / "ada" / grade_all.KEY_FILE).exists(), "graded before the disk filled: kept"
    (out / "bob" / "ballast").unlink()  # the instructor makes room, then writes the gradebook
    book = rows(out)
    assert set(book) == {"ada", "bob", "cy", "dee"}
    assert book["ada"]["total"] != "" and book["ada"]["error"] == ""
    lines = {line.split(":")[0]: line for line in err.splitlines() if line.startswith("grader error for ")}
    for name in ("bob", "cy", "dee"):  # after the fill: no grade, each named on the terminal with why
        assert "No space left on device" in lines[f"grader error for {name}"], err
        assert book[name]["total"] == "" and book[name]["error"].startswith(("not graded", "no results")), book[name]
        assert not (out / name / grade_all.KEY_FILE).exists()
    assert "3 student(s) not graded because of a grader error" in err

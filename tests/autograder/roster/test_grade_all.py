"""`autograde grade-all`: a roster in parallel, resumable, interruptible, one bad submission costing only itself."""

import csv
import functools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import EXERCISES, build_submission, replace_in

from autograder import commands, rubric
from autograder.roster import grade_all
from autograder.sandbox import zygote
from autograder.sandbox.worker import COLD_WORKER

pytestmark = pytest.mark.gradings  # every test here grades submissions through the worker

ONLY = ["gather_final", "masked_mean"]
GRADE = commands.grade_one


def full_marks() -> float:
    return rubric.load().select(ONLY).total


@pytest.fixture
def class_folder(tmp_path: Path) -> Path:
    """Four students: a correct one, the stubs, one whose gather_final hangs, one with no exercises/ at all."""
    folder = tmp_path / "submissions"
    build_submission(folder / "ada")
    build_submission(folder / "bob", EXERCISES)
    hanging = replace_in("padding", "    index = (lengths", "    while True:\n        pass\n    index = (lengths")
    build_submission(folder / "cy", edits={"padding": hanging})
    (folder / "dee" / "notes").mkdir(parents=True)
    return folder


def scores(out: Path) -> dict[str, float]:
    return {
        folder.name: json.loads((folder / "results.json").read_text())["score"]
        for folder in sorted(out.iterdir())
        if folder.is_dir()
    }


def test_it_grades_every_student_and_records_a_submission_it_cannot_grade(class_folder, tmp_path):
    out = tmp_path / "out"
    seen = []
    outcomes = grade_all.grade_all(
        class_folder, out, jobs=2, grade=GRADE, progress=lambda o, done, total: seen.append((done, total)), only=ONLY
    )
    assert {o.student: o.status for o in outcomes} == {
        "ada": "graded",
        "bob": "graded",
        "cy": "graded",
        "dee": "not graded",  # nothing to grade: the student's, not tried again
    }
    assert seen[-1] == (4, 4)
    marks = scores(out)
    assert marks["ada"] == full_marks() and marks["bob"] == 0 and marks["dee"] == 0
    assert 0 < marks["cy"] < full_marks()  # masked_mean still earns its points
    dee = json.loads((out / "dee" / "results.json").read_text())
    assert "has no exercises/ folder" in dee["output"]
    (why,) = [outcome.detail for outcome in outcomes if outcome.student == "dee"]
    assert why == dee["output"], "the terminal says why, as results.json does"


def test_it_skips_unchanged_submissions_and_regrades_changed_ones(tmp_path):
    folder, out, only = tmp_path / "submissions", tmp_path / "out", ["gather_final"]
    build_submission(folder / "ada")
    build_submission(folder / "bob", EXERCISES)
    grade_all.grade_all(folder, out, jobs=2, grade=GRADE, only=only)
    correct = (folder / "ada" / "exercises" / "padding.py").read_text()
    (folder / "bob" / "exercises" / "padding.py").write_text(correct)
    again = {o.student: o.status for o in grade_all.grade_all(folder, out, jobs=2, grade=GRADE, only=only)}
    assert again == {"ada": "skipped", "bob": "graded"}
    assert scores(out)["bob"] == rubric.load().select(only).total
    assert {o.status for o in grade_all.grade_all(folder, out, jobs=2, grade=GRADE, only=["masked_mean"])} == {"graded"}
    forced = grade_all.grade_all(folder, out, jobs=2, grade=GRADE, force=True, only=["masked_mean"])
    assert {o.status for o in forced} == {"graded"}


def test_it_keeps_finished_results_when_interrupted_and_goes_on_afterwards(tmp_path):
    folder = tmp_path / "submissions"
    for name in ("a1", "a2", "a3"):
        build_submission(folder / name)
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "autograder.cli",
        "grade-all",
        str(folder),
        "--out",
        str(out),
        "--jobs",
        "1",
        "--only",
        "gather_final",
    ]
    # a shell that started us in the background may have set SIGINT to ignored, and children inherit that
    process = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert process.stderr is not None
    before = []  # its progress lines (plain, off a terminal) until a1 is done: then a2 is grading
    while not any(line.startswith("[1/3] a1: graded") for line in before):
        line = process.stderr.readline()
        assert line, f"grade-all ended before it finished a1:\n{''.join(before)}"
        before.append(line)
    process.send_signal(signal.SIGINT)
    _, after = process.communicate(timeout=60)
    err = "".join(before) + after
    assert process.returncode == 130, err
    assert "finished gradings are kept" in err
    assert (out / "a1" / "results.json").exists()
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=300, env={**os.environ, "CI": "true"})
    assert resumed.returncode == 0
    assert "a1: skipped" in resumed.stderr and "[3/3] a3: graded (" in resumed.stderr  # plain lines off a terminal
    assert set(scores(out)) == {"a1", "a2", "a3"}
    with open(out / "gradebook.csv") as handle:
        assert {row["student"] for row in csv.DictReader(handle)} == {"a1", "a2", "a3"}


def test_it_records_a_grading_process_that_died_with_its_signal_and_log_and_every_item_at_zero(tmp_path):
    submission, out = tmp_path / "submissions" / "ada", tmp_path / "out" / "ada"
    build_submission(submission)
    out.mkdir(parents=True)
    (out / "grader.log").write_text("Fatal Python error: Segmentation fault\n")
    outcome = grade_all.record_outcome(submission, out, -signal.SIGSEGV, time.monotonic(), rubric.load(), ONLY)
    assert outcome.status == "grader error"
    assert "killed by SIGSEGV" in outcome.detail and "Segmentation fault" in outcome.detail
    result = json.loads((out / "results.json").read_text())
    assert result["score"] == 0 and "killed by SIGSEGV" in result["output"]
    assert len(result["tests"]) == len(rubric.load().select(ONLY).items)
    assert not (out / grade_all.KEY_FILE).exists(), "a failed grading must be regraded on the next run"


def test_its_fork_server_preloads_the_module_of_the_function_that_grades_one_submission():
    for grade in (GRADE, functools.partial(GRADE)):
        preload = grade_all.server_preload(grade)
        assert preload[0] == "autograder.commands" and "autograder.todos.gather_final.checks" in preload


def test_it_regrades_a_grading_made_with_other_settings_such_as_an_opt_out_of_isolation(tmp_path):
    submission, out = tmp_path / "submissions" / "ada", tmp_path / "out" / "ada"
    build_submission(submission)
    out.mkdir(parents=True)
    (out / "results.json").write_text('{"tests": []}')  # a grading that stands
    opted_out = grade_all.settings_of(functools.partial(commands.grade_one, require_isolation=False))
    required = grade_all.settings_of(functools.partial(commands.grade_one, require_isolation=True))
    assert (
        grade_all.record_outcome(submission, out, 0, time.monotonic(), rubric.load(), ONLY, opted_out).status
        == "graded"
    )
    assert grade_all.up_to_date(submission, out, rubric.load(), ONLY, opted_out)
    assert not grade_all.up_to_date(submission, out, rubric.load(), ONLY, required)


def says_which_zygote(submission: Path, out: Path, only: list[str] | None) -> int:
    """A grading that only writes down the zygote its workers would ask (none: each its own)."""
    (out / "zygote").write_text(str(zygote.shared()))
    return 0


def test_it_hands_every_grading_of_a_run_the_same_zygote_and_ends_it_with_the_run(tmp_path):
    for student in ("ada", "bob"):
        build_submission(tmp_path / "submissions" / student)
    grade_all.grade_all(tmp_path / "submissions", tmp_path / "out", 2, says_which_zygote, only=ONLY)
    asked = {(tmp_path / "out" / student / "zygote").read_text() for student in ("ada", "bob")}
    assert len(asked) == 1, asked
    address = Path(asked.pop())
    assert address.name == zygote.SOCKET_NAME and not address.parent.exists(), "the run's zygote outlived its run"


def test_it_starts_no_zygote_for_todays_way(monkeypatch):
    monkeypatch.setenv(COLD_WORKER, "1")
    assert grade_all.run_zygote() is None

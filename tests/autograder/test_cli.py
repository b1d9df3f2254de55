"""`autograde grade` as a grader runs it: exit status, files written, the job summary."""

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import hostile
import pytest
from support import EXERCISES, rubric_file

from autograder import TITLE, cli, rubric


def points(function: str) -> float:
    return rubric.load().select([function]).total


@pytest.mark.gradings
def test_it_writes_results_and_exits_0_whatever_the_score(submission, tmp_path, capsys):
    out = tmp_path / "out"
    code = cli.main(["grade", str(submission(base=EXERCISES)), "--out", str(out), "--only", "gather_final"])
    assert code == 0
    assert json.loads((out / "results.json").read_text())["score"] == 0
    assert (out / "summary.md").read_text().startswith("## Week 07")
    assert "TODO 4 · gather-at-final-index is not done yet" in capsys.readouterr().out


@pytest.mark.gradings
def test_it_exits_1_below_fail_under(submission, tmp_path):
    full = points("gather_final")
    arguments = ["grade", str(submission()), "--out", str(tmp_path), "--only", "gather_final"]
    assert cli.main([*arguments, "--fail-under", str(full + 1)]) == 1
    assert json.loads((tmp_path / "results.json").read_text())["score"] == full
    assert cli.main([*arguments, "--fail-under", str(full)]) == 0


@pytest.mark.gradings
def test_it_appends_the_summary_to_the_github_job_summary(submission, tmp_path, monkeypatch):
    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    cli.main(["grade", str(submission()), "--out", str(tmp_path / "out"), "--only", "masked_mean"])
    text = summary.read_text()
    full = f"{points('masked_mean'):g}"
    assert text.startswith("earlier step\n") and f"masked_mean: values | {full} | {full} |" in text


def test_it_exits_2_and_still_writes_results_when_there_is_no_exercises_folder(tmp_path, capsys):
    code = cli.main(["grade", str(tmp_path / "nowhere"), "--out", str(tmp_path / "out")])
    assert code == 2
    assert "has no exercises/ folder" in capsys.readouterr().err
    document = json.loads((tmp_path / "out" / "results.json").read_text())
    assert document["score"] == 0 and "has no exercises/ folder" in document["output"]


def test_it_exits_2_on_an_unknown_name_in_only(tmp_path, capsys):
    assert cli.main(["grade", str(tmp_path), "--only", "rnn_forwards"]) == 2
    assert "no rubric items for rnn_forwards" in capsys.readouterr().err


BAD_RUBRICS = {
    "an unknown id in [credit]": ("[credit]\nR9 = 0.5\n", "[credit] names R9, which is not a catalogue id"),
    "a credit above 1": ("[credit]\nR1 = 2\n", "credit.R1 must be a fraction from 0 to 1, not 2"),
    "a credit below 0": ("[credit]\nR1 = -0.25\n", "credit.R1 must be a fraction from 0 to 1, not -0.25"),
    "a negative max_days": ("[late]\nper_day = 0.1\nmax_days = -2\n", "late.max_days must be a whole number"),
    "an unknown keep": ('[late]\nper_day = 0.1\nmax_days = 3\nkeep = "first"\n', "late.keep must be one of"),
    "a per_day above 1": ("[late]\nper_day = 10\nmax_days = 3\n", "late.per_day must be a fraction from 0 to 1"),
    "an unknown late setting": ("[late]\nper_day = 0.1\nmax_days = 3\ngrace = 1\n", "unknown setting late.grace"),
    "a file that is not TOML": ("[late\n", "cannot be read as a rubric"),
}


@pytest.mark.parametrize("problem", BAD_RUBRICS)
def test_it_exits_2_with_one_line_saying_what_is_wrong_with_a_rubric_file(tmp_path, capsys, problem):
    sections, message = BAD_RUBRICS[problem]
    bad = rubric_file(tmp_path / "section.toml", sections)
    code = cli.main(["grade", str(tmp_path), "--out", str(tmp_path / "out"), "--rubric", str(bad)])
    error = capsys.readouterr().err
    assert code == 2 and error.splitlines() == [error.strip()], error
    assert error.startswith(f"autograde: {bad}") and message in error
    assert not (tmp_path / "out").exists(), "nothing is graded by a rubric that cannot be used"


@pytest.mark.parametrize("command", ["grade", "grade-all", "gradebook", "report"])
def test_every_command_that_reads_the_rubric_refuses_a_bad_one_the_same_way(tmp_path, capsys, command):
    bad = rubric_file(tmp_path / "section.toml", BAD_RUBRICS["a negative max_days"][0])
    (tmp_path / "folder").mkdir()
    out = ["--out", str(tmp_path / "out")]
    assert cli.main([command, str(tmp_path / "folder"), *out, "--rubric", str(bad)]) == 2
    error = capsys.readouterr().err
    assert error == f"autograde: {bad}: late.max_days must be a whole number of days, at least 0, not -2\n"
    assert cli.main([command, str(tmp_path / "folder"), *out, "--rubric", str(tmp_path / "nowhere.toml")]) == 2
    assert f"{tmp_path / 'nowhere.toml'} cannot be read as a rubric" in capsys.readouterr().err


@pytest.fixture
def hostile_fork(submission: Callable[..., Path]) -> Iterator[tuple[Path, list[str]]]:
    """The reference's modules in a fork that also holds every hostile name and a tree 1,100 folders deep."""
    fork = submission()
    names = hostile.plant(fork)
    yield fork, names
    hostile.remove(fork)  # pytest's own clean-up recurses: it cannot remove such a tree


@pytest.mark.gradings
def test_it_grades_a_hostile_tree_and_writes_every_report_with_every_name_inert(
    hostile_fork, tmp_path, monkeypatch, capsys
):
    fork, names = hostile_fork
    step_summary = tmp_path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    assert cli.main(["grade", str(fork), "--out", str(tmp_path / "out"), "--only", "gather_final"]) == 0
    document = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert document["score"] == points("gather_final"), document["output"]
    assert set(names) <= set(document["extra_data"]["ignored_files"]), "every name listed, escaped"
    assert "notes-\\xff.txt" in document["extra_data"]["ignored_files"]
    deep = [entry for entry in document["extra_data"]["left_out"] if entry["why"] == "too deep"]
    assert [entry["path"] for entry in deep] == ["d/" * 33], "the listing stops at its depth, and says so"
    headings = [f"{TITLE}: {points('gather_final'):g} / {points('gather_final'):g}", "Not read by the grader"]
    for report in (tmp_path / "out" / "summary.md", step_summary):
        assert hostile.live(report.read_text(encoding="utf-8"), names, headings) == [], report.name
    printed = capsys.readouterr()
    assert hostile.workflow_commands(printed.out + printed.err) == [] and "\x1b" not in printed.out + printed.err


@pytest.mark.gradings
def test_it_says_that_a_module_over_the_size_limit_was_not_read(submission, tmp_path):
    fork = submission()
    with open(fork / "exercises" / "baseline.py", "r+b") as module:
        module.truncate(200 << 20)  # 200 MiB, sparse: no disk is spent
    assert cli.main(["grade", str(fork), "--out", str(tmp_path / "out"), "--only", "bag_of_counts"]) == 0
    document = json.loads((tmp_path / "out" / "results.json").read_text())
    (test,) = document["tests"]
    assert test["score"] == 0
    assert test["output"].startswith(
        "exercises/baseline.py was not read by the grader: it is 200 MiB, over the 1 MiB limit for one module."
    )
    assert {"path": "exercises/baseline.py", "why": "too big"}.items() <= document["extra_data"]["left_out"][0].items()

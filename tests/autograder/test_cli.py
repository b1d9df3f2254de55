"""`autograde grade` as a grader runs it: exit status, files written, the job summary."""

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import hostile
import pytest
from support import EXERCISES

from autograder import TITLE, cli, rubric


def points(function: str) -> float:
    return rubric.load().select([function]).total


def test_it_writes_results_and_exits_0_whatever_the_score(submission, tmp_path, capsys):
    out = tmp_path / "out"
    code = cli.main(["grade", str(submission(base=EXERCISES)), "--out", str(out), "--only", "gather_final"])
    assert code == 0
    assert json.loads((out / "results.json").read_text())["score"] == 0
    assert (out / "summary.md").read_text().startswith("## Week 07")
    assert "TODO 4 · gather-at-final-index is not done yet" in capsys.readouterr().out


def test_it_exits_1_below_fail_under(submission, tmp_path):
    full = points("gather_final")
    arguments = ["grade", str(submission()), "--out", str(tmp_path), "--only", "gather_final"]
    assert cli.main([*arguments, "--fail-under", str(full + 1)]) == 1
    assert json.loads((tmp_path / "results.json").read_text())["score"] == full
    assert cli.main([*arguments, "--fail-under", str(full)]) == 0


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


@pytest.fixture
def hostile_fork(submission: Callable[..., Path]) -> Iterator[tuple[Path, list[str]]]:
    """The reference's modules in a fork that also holds every hostile name and a tree 1,100 folders deep."""
    fork = submission()
    names = hostile.plant(fork)
    yield fork, names
    hostile.remove(fork)  # pytest's own clean-up recurses: it cannot remove such a tree


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

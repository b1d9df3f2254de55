"""`autograde grade` as a grader runs it: exit status, files written, the job summary."""

import json

from support import EXERCISES

from autograder import cli, rubric


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

"""Feedback to students: one issue per student repository, through a stand-in `gh` that records each call."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT, rubric_file
from workflow_runner import stand_in_gh

from autograder import rubric
from autograder.grading import writers
from autograder.grading.grade import failed_grading
from autograder.grading.results import GradingResult, ItemResult
from autograder.roster import issues

DEADLINE = "2026-12-04T23:59:00+01:00"
ROSTER = "course/alice\ncourse/bob  2026-12-06T23:59:00+01:00\ncourse/cy\ncourse/dee\n"


def graded(folder: Path, missed: int = 0, commit: str = "a1b2c3d4e5f60718293a", deadline: str = DEADLINE) -> Path:
    """A student's folder as a shard uploads it: every item graded, the first `missed` of them failed."""
    items = []
    for number, item in enumerate(rubric.load().items):
        passed = number >= missed
        score, status, text = (item.points, "passed", "") if passed else (0, "failed", "Check the shapes.")
        items.append(ItemResult(item.name, item.function, "", score, item.points, status, text))
    folder.mkdir(parents=True, exist_ok=True)
    writers.write_results_json(GradingResult(items, 1.0), folder / "results.json")
    writers.write_summary_md(GradingResult(items, 1.0), folder / "summary.md")
    for name, text in {"commit": commit, "commit-time": "2026-12-04T21:10:00+01:00", "deadline": deadline}.items():
        (folder / name).write_text(text + "\n")
    return folder


@pytest.fixture
def course(tmp_path: Path) -> dict:
    """alice and bob graded, cy without a commit, dee's grading failed, eve not on the roster."""
    results = tmp_path / "graded"
    graded(results / "course__alice", missed=2)
    graded(results / "course__bob", deadline="2026-12-06T23:59:00+01:00")
    (results / "course__cy").mkdir(parents=True)
    (results / "course__cy" / "error").write_text(f"no commit before the deadline {DEADLINE}\n")
    (results / "course__dee").mkdir()
    crashed = failed_grading(rubric.load(), "the grading process ended with status 1", 1.0)
    writers.write_results_json(crashed, results / "course__dee" / "results.json")
    writers.write_summary_md(crashed, results / "course__dee" / "summary.md")  # as grade-all leaves it
    graded(results / "course__eve")
    (tmp_path / "roster.txt").write_text(ROSTER)
    stand_in_gh(tmp_path / "bin", tmp_path / "gh.json")
    return {"root": tmp_path, "results": results, "state": tmp_path / "gh.json"}


def post(course: dict, *options: str, token: str = "feedback-token") -> subprocess.CompletedProcess:
    """The module as the feedback job runs it: python -S (the standard library only), gh on PATH."""
    command = [
        sys.executable,
        "-S",
        "-m",
        "autograder.roster.issues",
        str(course["results"]),
        "--roster",
        str(course["root"] / "roster.txt"),
        *options,
    ]
    env = {"PATH": f"{course['root'] / 'bin'}:/usr/bin:/bin", "GH_TOKEN": token}
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)  # fmt: skip


def calls(course: dict) -> list[dict]:
    path = course["state"].with_suffix(".calls.jsonl")
    found = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    path.unlink(missing_ok=True)
    return found


def posted_issues(course: dict) -> dict[str, list[dict]]:
    return json.loads(course["state"].read_text())["issues"]


def configure(course: dict, **state: object) -> None:
    course["state"].write_text(json.dumps(state))


def test_it_opens_one_issue_per_graded_roster_student_with_their_summary_and_what_was_graded(course):
    done = post(course)
    assert done.returncode == 0, done.stderr
    made = calls(course)
    assert {call["token"] for call in made} == {"feedback-token"}
    assert [call["args"][:3] for call in made] == [
        ["issue", "list", "--repo"],
        ["issue", "create", "--repo"],
        ["issue", "list", "--repo"],
        ["issue", "create", "--repo"],
    ]
    assert "--state" in made[0]["args"] and made[0]["args"][made[0]["args"].index("--state") + 1] == "all"
    opened = posted_issues(course)
    assert set(opened) == {"course/alice", "course/bob"}, "cy has no grading, dee's failed, eve is not on the roster"
    alice, bob = opened["course/alice"][0], opened["course/bob"][0]
    assert alice["title"] == issues.ISSUE_TITLE == "Week 07 · Recurrent Networks: your grade and feedback"
    assert alice["body"].startswith((course["results"] / "course__alice" / "summary.md").read_text().rstrip())
    assert (
        "Check the shapes." in alice["body"] and "commit `a1b2c3d4e5f6` of 2026-12-04T21:10:00+01:00" in alice["body"]
    )
    assert "your deadline, 2026-12-06T23:59:00+01:00" in bob["body"] and issues.MARKER in bob["body"]
    assert "course/cy: skipped no valid grading: no commit before the deadline" in done.stdout
    assert "course/dee: skipped no valid grading: grading failed" in done.stdout
    assert "feedback: 2 opened, 0 updated, 0 unchanged, 2 skipped, 0 failed" in done.stdout


def test_it_edits_the_same_issue_when_the_feedback_changed_and_writes_nothing_when_it_did_not(course):
    assert post(course).returncode == 0
    calls(course)
    graded(course["results"] / "course__alice", missed=0, commit="f00dfeedf00dfeedf00d")
    done = post(course)
    assert done.returncode == 0 and "feedback: 0 opened, 1 updated, 1 unchanged, 2 skipped, 0 failed" in done.stdout
    assert [call["args"][:4] for call in calls(course) if call["args"][1] != "list"] == [
        ["issue", "edit", "1", "--repo"]
    ]
    alice = posted_issues(course)["course/alice"]
    assert len(alice) == 1 and "f00dfeedf00d" in alice[0]["body"]


def test_it_updates_our_issue_rather_than_another_with_the_same_title(course):
    theirs = {"number": 1, "title": issues.ISSUE_TITLE, "body": "my own notes"}
    ours = {"number": 2, "title": issues.ISSUE_TITLE, "body": f"old feedback\n{issues.MARKER}\n"}
    configure(course, issues={"course/alice": [theirs, ours]})
    assert post(course).returncode == 0
    alice = posted_issues(course)["course/alice"]
    assert alice[0]["body"] == "my own notes" and "Check the shapes." in alice[1]["body"]


def test_it_says_what_to_do_for_a_repository_it_cannot_post_to_and_posts_the_others(course):
    configure(course, disabled=["course/alice"], missing=["course/bob"])
    (course["results"] / "course__cy" / "error").unlink()
    graded(course["results"] / "course__cy")
    done = post(course)
    assert done.returncode == 1
    assert (
        "::error title=no feedback for course/alice::issues are turned off in course/alice: turn them on" in done.stdout
    )
    assert (
        "::error title=no feedback for course/bob::the token cannot see course/bob: give FEEDBACK_TOKEN access"
        in done.stdout
    )
    assert set(posted_issues(course)) == {"course/cy"}


def test_it_waits_and_retries_when_github_asks_to_slow_down(course):
    configure(course, slow_down_once=["course/alice"])
    done = post(course, "--retry-wait", "0")
    assert done.returncode == 0, done.stdout + done.stderr
    creates = [call for call in calls(course) if call["args"][1] == "create"]
    assert [call["args"][3] for call in creates] == ["course/alice", "course/alice", "course/bob"]
    assert len(posted_issues(course)["course/alice"]) == 1


def test_it_stops_at_once_when_github_refuses_the_token(course):
    done = post(course, token="")
    assert done.returncode == 2 and "GitHub refused the token" in done.stderr
    assert len(calls(course)) == 1


def test_it_paces_writes_under_githubs_limits_per_minute_and_per_hour():
    now, slept = [0.0], []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    pacer = issues.Pacer(per_minute=2, per_hour=3, clock=lambda: now[0], sleep=sleep)
    for _ in range(4):
        pacer.wait()
        now[0] += 1.0
    # writes at 0 and 1; the third waits until 60 (a minute after the first); the fourth until 3600
    assert slept == [58.0, 3600.0 - 61.0]


def test_it_shortens_a_summary_beyond_githubs_limit_after_a_whole_item():
    block = "<details><summary>item</summary>\n\n```text\n" + "x" * 9_000 + "\n```\n\n</details>\n"
    text = issues.shortened("## score\n" + block * 10)
    assert len(text) < issues.MAX_BODY and text.count("<details>") == text.count("</details>") == 6
    assert text.endswith("*(Shortened: GitHub limits the length of an issue.)*\n")


def test_it_says_what_the_late_work_policy_took_and_why_before_the_summary(course):
    section = rubric_file(course["root"] / "section.toml", "[late]\nper_day = 0.10\nmax_days = 3\n")
    late = rubric.load(section).late
    bob = course["results"] / "course__bob"
    (bob / "commit-time").write_text("2026-12-08T11:59:00+01:00\n")  # 1.5 days after his deadline
    assert post(course, "--rubric", str(section)).returncode == 0
    body = posted_issues(course)["course/bob"][0]["body"]
    raw = rubric.load().total
    penalty = late.penalty(raw, 2)
    assert body.startswith(f"**Your grade: {raw - penalty:g} / {raw:g}**, after the course's late-work policy")
    assert f"({rubric.late_policy(late)}). Commit a1b2c3d4e5f6 was made 1 day 12 h after the deadline" in body
    assert f"{rubric.percent(2 * late.per_day)} of its {raw:g} points taken, {raw - penalty:g} left." in body
    assert f"the last within {late.max_days} days of your deadline, 2026-12-06T23:59:00+01:00." in body
    alice = posted_issues(course)["course/alice"][0]["body"]
    assert alice.startswith((course["results"] / "course__alice" / "summary.md").read_text().rstrip()), "on time"


def test_it_refuses_a_bad_rubric_file_before_posting_anything(course):
    bad = rubric_file(course["root"] / "bad.toml", "[credit]\nR1 = 2\n")
    done = post(course, "--rubric", str(bad))
    assert done.returncode == 2 and calls(course) == []
    assert done.stderr == f"feedback: {bad}: credit.R1 must be a fraction from 0 to 1, not 2\n"

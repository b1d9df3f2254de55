"""The roster workflow run here end to end: shards, per-student deadlines, re-runs, the merge, feedback.

Its jobs run step by step as a runner runs them (tests/helpers/workflow_runner.py): the grading
step verbatim, under a stand-in `sudo` that resets the environment as sudo does, with the grader
the job's own install step put in its venv (tests/helpers/deployed.py: not editable), over git
repositories standing in for the students' (commits dated around the deadline), cloned through
$GITHUB_SERVER_URL; the feedback step against a stand-in `gh`. Three runs: the whole roster, a
re-run of one student who got an extension, a re-run of one shard; each merged with the last.
"""

import csv
import dataclasses
import json
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import attack_suite as suite
import deployed
import hostile
import pytest
import workflow_runner
import yaml
from attack_suite import processes_with
from support import EXERCISES, ROOT, SOLUTIONS, rubric_file
from workflow_runner import Artifacts, Context, Runner, environment, evaluate, stand_in_gh, stand_in_sudo, tools

from autograder import TITLE, rubric, todos
from autograder.roster.issues import ISSUE_TITLE
from autograder.sandbox import cgroup, record

pytestmark = pytest.mark.deployed  # every job runs the grader from the roster job's own venv

WORKFLOW = ROOT / ".github" / "workflows" / "grade-roster.yml"
DEADLINE = "2026-12-04T23:59:00+01:00"
INSTALLS = ("Install CPU torch and the grader", "Install CPU torch and the grader (with the report's charts)")
# the students' gradings use the stubs and the reference's padding.py: quick to grade, 20 points
PADDING = {record.key for record in todos.records() if record.module == "padding"}
PADDING_POINTS = sum(item.points for item in rubric.load().items if item.function in PADDING)
TOTAL = rubric.load().total


def git(repository: Path, *arguments: str, when: str | None = None) -> str:
    dates = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when} if when else {}
    identity = ["-c", "user.name=Student", "-c", "user.email=student@example.org", "-c", "commit.gpgsign=false"]
    done = subprocess.run(
        ["git", *identity, *arguments], cwd=repository, env={**os.environ, **dates}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def commit(repository: Path, when: str, padding_done: bool, done: tuple[str, ...] = ()) -> str:
    """A commit of the student's exercises/: the stubs, with the reference's padding.py when it is done
    (and the reference's modules named in `done`)."""
    (repository / "exercises").mkdir(parents=True, exist_ok=True)
    if not (repository / ".git").exists():
        git(repository, "init", "--quiet", "--initial-branch=main")
    for path in EXERCISES.glob("*.py"):
        shutil.copyfile(path, repository / "exercises" / path.name)
    for module in ("padding",) * padding_done + done:
        shutil.copyfile(SOLUTIONS / f"{module}.py", repository / "exercises" / f"{module}.py")
    git(repository, "add", "-A")
    git(repository, "commit", "--quiet", "--allow-empty", "-m", f"work of {when}", when=when)
    return git(repository, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Four students: alice (stubs by the deadline, padding done 31 minutes after it), bob (padding done
    in his extension), carol (nothing before the deadline), dan (no repository)."""
    root = tmp_path_factory.mktemp("course")
    remotes = root / "remotes" / "course"
    commits = {
        "alice-1": commit(remotes / "alice-week07", "2026-12-04T20:00:00+01:00", padding_done=False),
        # 23:30 UTC is 00:30 the next day at +01:00: after the deadline
        "alice-2": commit(remotes / "alice-week07", "2026-12-04T23:30:00+00:00", padding_done=True),
        "bob-1": commit(remotes / "bob-week07", "2026-12-03T18:00:00+01:00", padding_done=False),
        "bob-2": commit(remotes / "bob-week07", "2026-12-06T12:00:00+01:00", padding_done=True),
        "carol-1": commit(remotes / "carol-week07", "2026-12-05T09:00:00+01:00", padding_done=True),
    }
    return {**stand_up(root), "commits": commits}


def stand_up(root: Path, files: dict[str, Path] | None = None) -> dict:
    """The runner of the workflow, its stand-ins (sudo, gh) and tools, for the repositories under root/remotes;
    `files`: what else this repository holds (a course section's rubric)."""
    stand_ins, sudo_log, gh_state = root / "stand-ins", root / "sudo.log", root / "gh.json"
    stand_in_sudo(stand_ins, sudo_log)
    stand_in_gh(stand_ins, gh_state)
    bin_folder = tools(root / "tools", sys.executable)
    env = environment(f"{stand_ins}:{bin_folder}:{os.environ['PATH']}", GITHUB_SERVER_URL=f"file://{root / 'remotes'}")
    workflow = yaml.safe_load(WORKFLOW.read_text())
    runner = Runner(workflow, Artifacts(root / "artifacts"), env, left_out=INSTALLS, files=files or {})
    return {"root": root, "runner": runner, "sudo_log": sudo_log, "gh_state": gh_state, "tools": bin_folder}


def roster(course: dict, run: int, extensions: dict[str, str]) -> Path:
    lines = [f"course/{name}-week07  {extensions.get(name, '')}".rstrip() for name in ("alice", "bob", "carol", "dan")]
    path = course["root"] / f"roster-{run}.txt"
    path.write_text("# week 7\n" + "\n".join(lines) + "\n")
    return path


def run_workflow(course: dict, run: int, **inputs: object) -> dict:
    """One run: setup, every shard of its matrix, the gradebook, and feedback when its job would run."""
    runner, root = course["runner"], course["root"] / f"run-{run}"
    inputs = {"deadline": DEADLINE, "max_parallel": 20, "shard_size": 2, "students": "", "shards": "",
              "previous_run": "", "feedback": True, "rubric": "autograder/rubric.toml", **inputs}  # fmt: skip
    secrets = {"FEEDBACK_TOKEN": "feedback-token"}
    github = {"token": "run-token"}
    setup = runner.run_job("setup", run, Context(inputs, github, secrets), root / "setup")
    assert setup.result == "success", [(s.name, s.stderr) for s in setup.steps]
    jobs = {"setup": setup, "shards": {}}
    needs = {"setup": {"result": setup.result, "outputs": setup.outputs}}
    for entry in json.loads(setup.outputs["matrix"])["include"]:
        workspace = root / f"grade-{entry['shard']}"
        workspace.mkdir(parents=True)
        (workspace / "grader-venv").symlink_to(deployed.venv())  # what the left-out install step makes
        context = Context(inputs, github, secrets, matrix=entry, needs=needs)
        jobs["shards"][entry["shard"]] = runner.run_job("grade", run, context, workspace)
    failed = any(job.result == "failure" for job in jobs["shards"].values())
    needs["grade"] = {"result": "failure" if failed else "success", "outputs": {}}
    for name in ("gradebook", "feedback"):
        job = runner.workflow["jobs"][name]
        if evaluate(job["if"].strip("${} "), Context(inputs, github, secrets, needs=needs)):
            jobs[name] = runner.run_job(name, run, Context(inputs, github, secrets, needs=needs), root / name)
            needs[name] = {"result": jobs[name].result, "outputs": jobs[name].outputs}
    jobs["gh"] = gh_calls(course)  # what this run's feedback asked of GitHub
    return jobs


def gradebook(course: dict, run: int) -> dict[str, dict[str, str]]:
    """The run's gradebook.csv by first name (alice, bob, ...)."""
    path = course["root"] / f"run-{run}" / "gradebook" / "gradebook" / "gradebook.csv"
    with path.open(newline="") as handle:
        return {row["student"].split("/")[1].split("-")[0]: row for row in csv.DictReader(handle)}


def gh_calls(course: dict) -> list[dict]:
    path = course["gh_state"].with_suffix(".calls.jsonl")
    calls = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    path.unlink(missing_ok=True)
    return calls


def writes(calls: list[dict]) -> list[tuple[str, str]]:
    return [
        (call["args"][1], call["args"][call["args"].index("--repo") + 1]) for call in calls if call["args"][1] != "list"
    ]


@pytest.fixture(scope="module")
def first_run(course: dict) -> dict:
    return run_workflow(course, 1, roster=str(roster(course, 1, {"bob": "2026-12-06T23:59:00+01:00"})))


def test_it_grades_the_roster_in_shards_each_as_root_with_the_grader_called_by_its_path(first_run, course):
    matrix = json.loads(first_run["setup"].outputs["matrix"])["include"]
    assert [(entry["shard"], entry["of"], entry["size"]) for entry in matrix] == [(1, 2, 2), (2, 2, 2)]
    assert matrix[0]["students"][1] == {"repository": "course/bob-week07", "deadline": "2026-12-06T23:59:00+01:00"}
    calls = course["sudo_log"].read_text().splitlines()
    grading = [call for call in calls if " grade-all " in call]
    venv = course["root"] / "run-1" / "grade-1" / "grader-venv"
    cores = len(os.sched_getaffinity(0))
    command, budget = grading[0].rsplit(" --time-budget ", 1)
    assert command == (
        f"{venv}/bin/autograde grade-all submissions --out results --jobs {cores} --require-isolation "
        "--rubric grader/autograder/rubric.toml"
    )
    job = course["runner"].workflow["jobs"]["grade"]
    most = (job["env"]["SHARD_MINUTES"] - job["env"]["UPLOAD_MINUTES"]) * 60
    assert 0 < int(budget) <= most, "grade-all ends within what is left of the job's time, less the upload's"
    assert first_run["shards"][1].result == "success"
    results = course["root"] / "run-1" / "grade-1" / "results" / "course__bob-week07" / "results.json"
    isolation = json.loads(results.read_text())["extra_data"]["isolation"]
    assert isolation["hidden_instructor_files"] and isolation["no_network"] and isolation["no_process_outlives"]
    assert "| course/alice-week07 |" in first_run["shards"][1].summary, "each shard's table is on its job's page"


def test_it_grades_each_student_at_their_own_deadline_and_records_it(first_run, course):
    assert first_run["gradebook"].result == "success"
    rows, commits = gradebook(course, 1), course["commits"]
    alice, bob = rows["alice"], rows["bob"]
    assert (alice["commit"], alice["deadline"], float(alice["total"])) == (commits["alice-1"], DEADLINE, 0)
    assert alice["commit time"] == "2026-12-04T20:00:00+01:00"
    assert (bob["commit"], bob["deadline"], float(bob["total"])) == (
        commits["bob-2"],
        "2026-12-06T23:59:00+01:00",
        PADDING_POINTS,
    )
    assert float(bob["max"]) == TOTAL and alice["graded at"] and bob["error"] == ""


def test_it_lists_a_student_without_a_commit_and_fails_the_shard_only_for_a_failed_checkout(first_run, course):
    rows = gradebook(course, 1)
    assert rows["carol"]["error"] == f"no commit before the deadline {DEADLINE}" and rows["carol"]["total"] == ""
    assert rows["dan"]["error"].startswith("could not clone file://") and "fatal: " in rows["dan"]["error"]
    shard = first_run["shards"][2]
    assert shard.result == "failure" and shard.step("Every grading completed").status == 1
    assert "course/dan-week07" in shard.step("Every grading completed").stdout
    assert "course/carol-week07" not in shard.step("Every grading completed").stdout
    assert shard.step("actions/upload-artifact").ran, "a failed shard still uploads what it graded"


def test_its_feedback_job_opens_one_issue_per_graded_student_with_the_secret_as_token(first_run, course):
    calls = first_run["gh"]
    assert {call["token"] for call in calls} == {"feedback-token"}
    assert writes(calls) == [("create", "course/alice-week07"), ("create", "course/bob-week07")]
    create = next(call for call in calls if call["args"][1] == "create" and "course/bob-week07" in call["args"])
    assert create["args"][create["args"].index("--title") + 1] == ISSUE_TITLE
    assert f": {PADDING_POINTS:g} / {TOTAL:g}" in create["body"] and course["commits"]["bob-2"][:12] in create["body"]
    assert "feedback: 2 opened, 0 updated, 0 unchanged, 2 skipped, 0 failed" in first_run["feedback"].steps[-1].stdout


def artifact(course: dict, run: int, name: str) -> Path:
    return course["root"] / "artifacts" / str(run) / name


def test_its_shards_keep_the_week_modules_graded_apart_from_the_gradings_and_feedback_never_sees_them(
    first_run, course
):
    kept = artifact(course, 1, "modules-shard-1")
    assert sorted(path.name for path in kept.iterdir()) == ["course__alice-week07", "course__bob-week07"]
    bob = kept / "course__bob-week07"
    assert (bob / "commit").read_text().strip() == course["commits"]["bob-2"]
    assert sorted(path.name for path in (bob / "exercises").iterdir()) == sorted(p.name for p in EXERCISES.glob("*.py"))
    assert (bob / "exercises" / "padding.py").read_bytes() == (SOLUTIONS / "padding.py").read_bytes()
    assert not artifact(course, 1, "modules-shard-2").exists(), "carol had no commit and dan no repository"
    for shard in (1, 2):
        assert not list(artifact(course, 1, f"grading-shard-{shard}").rglob("*.py")), "the gradings hold no code"
    assert not list((course["root"] / "run-1" / "feedback").rglob("*.py")), "the job with the token takes no code"


@pytest.fixture(scope="module")
def student_rerun(first_run, course) -> dict:
    extensions = {"bob": "2026-12-06T23:59:00+01:00", "carol": "2026-12-05T12:00:00+01:00"}
    return run_workflow(
        course, 2, roster=str(roster(course, 2, extensions)), students="course/carol-week07", previous_run="1"
    )


def test_a_rerun_of_one_student_grades_only_them_and_merges_with_the_previous_run(student_rerun, course):
    matrix = json.loads(student_rerun["setup"].outputs["matrix"])["include"]
    assert [(entry["shard"], [s["repository"] for s in entry["students"]]) for entry in matrix] == [
        (2, ["course/carol-week07"])
    ]
    assert student_rerun["gradebook"].result == "success"
    rows, first = gradebook(course, 2), gradebook(course, 1)
    assert float(rows["carol"]["total"]) == PADDING_POINTS and rows["carol"]["commit"] == course["commits"]["carol-1"]
    for name in ("alice", "bob", "dan"):
        assert rows[name] == first[name], f"{name} keeps the first run's grading"
    assert writes(student_rerun["gh"]) == [("create", "course/carol-week07")]


def test_a_reruns_similarity_page_compares_the_previous_runs_modules_with_the_students_it_graded_again(
    student_rerun, course
):
    """Needs `autograde similarity` (the engine's branch): the gradebook job runs it as the contract says."""
    job = student_rerun["gradebook"]
    said = [(step.name, step.status, step.stdout[-800:], step.stderr[-800:]) for step in job.steps]
    compared = job.step(next(step.name for step in job.steps if step.name.startswith("Who wrote")))
    assert compared.ran and "::warning::" not in compared.stdout and job.result == "success", said
    roster = artifact(course, 2, "modules")
    assert sorted(path.name for path in roster.iterdir()) == [
        "course__alice-week07",  # the first run's modules, with the grading kept from it
        "course__bob-week07",
        "course__carol-week07",  # graded again in this run
    ]
    page = artifact(course, 2, "gradebook")
    found = json.loads((page / "similarity.json").read_text())
    first = found["pairs"][0]
    assert {first["a"], first["b"]} == {"course__bob-week07", "course__carol-week07"}, (
        "both wrote the reference's padding"
    )
    assert {"course__bob-week07", "course__carol-week07"} <= {
        m["student"] for m in found["known"] if m["source"] == "solutions"
    }
    assert (page / "similarity.csv").is_file()
    assert "course__carol-week07" in (page / "similarity.html").read_text()
    assert 'href="similarity.html"' in (page / "report.html").read_text()


def test_a_rerun_of_one_shard_keeps_each_students_newest_grading_and_edits_feedback_only_when_it_changed(
    student_rerun, course
):
    extensions = {
        "alice": "2026-12-05T12:00:00+01:00",
        "bob": "2026-12-06T23:59:00+01:00",
        "carol": "2026-12-05T12:00:00+01:00",
    }
    jobs = run_workflow(course, 3, roster=str(roster(course, 3, extensions)), shards="1", previous_run="2")
    assert sorted(jobs["shards"]) == [1]
    assert jobs["gradebook"].result == "success"
    rows = gradebook(course, 3)
    assert rows["alice"]["commit"] == course["commits"]["alice-2"] and float(rows["alice"]["total"]) == PADDING_POINTS
    assert float(rows["carol"]["total"]) == PADDING_POINTS, "carol's grading of run 2 is kept"
    assert rows["dan"]["error"].startswith("could not clone")
    assert writes(jobs["gh"]) == [("edit", "course/alice-week07")], "bob's feedback did not change: no write"
    issues = json.loads(course["gh_state"].read_text())["issues"]
    assert {repository: len(listed) for repository, listed in issues.items()} == dict.fromkeys(issues, 1)
    assert course["commits"]["alice-2"][:12] in issues["course/alice-week07"][0]["body"]


# Late work, through the same steps: a course section's rubric whose points make the on-time work (padding)
# worth 60 and the late work (padding and the recurrence) 90, with [late] keeping each way in turn.
LATE_TIMES = {
    "on time": "2026-12-04T20:00:00+01:00",
    "20 hours late": "2026-12-05T19:59:00+01:00",
    "1.5 days late": "2026-12-06T11:59:00+01:00",
    "4 days late": "2026-12-08T23:59:00+01:00",
}
PADDING, BOTH = ("padding",), ("padding", "recurrence")
LATE_STUDENTS = {  # each student's commits: when, and the reference modules done by then
    "ann": [("on time", PADDING)],
    "ben": [("1.5 days late", PADDING)],
    "cat": [("4 days late", BOTH)],
    "eve": [("on time", PADDING), ("20 hours late", BOTH)],  # did more after the deadline
    "fay": [("on time", BOTH), ("20 hours late", PADDING)],  # broke something after it
}


SHARES = {"padding": 58.0, "recurrence": 30.0, "": 12.0}  # a course section's points per module ("": the rest)


def _share(function: str) -> str:
    module = todos.record(function).module
    return module if module in SHARES else ""


def section_points(function: str, aspect: str) -> float:
    """A course section's weights: the padding TODOs' items 58 points, the recurrence TODOs' 30, the rest 12: 100 in
    all. Each item of a share gets a multiple of 1/4 (exact in binary), the share's first item what the others
    leave."""
    items = [(item.function, item.aspect) for item in rubric.load().items if _share(item.function) == _share(function)]
    share = SHARES[_share(function)]
    each = share * 4 // len(items) / 4
    return share - each * (len(items) - 1) if (function, aspect) == items[0] else each


@pytest.fixture(scope="module")
def late_course(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("late-course")
    commits = {}
    for student, work in LATE_STUDENTS.items():
        for when, done in work:
            repository = root / "remotes" / "course" / f"{student}-week07"
            commits[student, when] = commit(repository, LATE_TIMES[when], padding_done=False, done=done)
    files = {}
    for keep in rubric.KEEP:
        section = f'[late]\nper_day = 0.10\nmax_days = 3\nkeep = "{keep}"\n'
        files[f"rubrics/{keep}.toml"] = rubric_file(root / f"{keep}.toml", section, section_points)
    (root / "roster.txt").write_text("".join(f"course/{student}-week07\n" for student in LATE_STUDENTS))
    return {**stand_up(root, files), "commits": commits, "files": files}


def late_run(late_course: dict, run: int, keep: str, **inputs: object) -> dict:
    roster = str(late_course["root"] / "roster.txt")
    return run_workflow(late_course, run, roster=roster, rubric=f"rubrics/{keep}.toml", shard_size=3, **inputs)


@pytest.fixture(scope="module")
def keep_latest(late_course: dict) -> dict:
    return late_run(late_course, 1, "latest")


@pytest.fixture(scope="module")
def keep_better(late_course: dict) -> dict:
    return late_run(late_course, 2, "better")


def worth(late_course: dict, keep: str, modules: tuple[str, ...]) -> tuple[float, rubric.Late]:
    """What the section's rubric gives the modules' functions, and its late policy."""
    section = rubric.load(late_course["files"][f"rubrics/{keep}.toml"])
    wanted = {record.key for record in todos.records() if record.module in modules}
    return sum(item.points for item in section.items if item.function in wanted), section.late


def test_with_late_work_a_commit_1_5_days_late_is_graded_and_keeps_what_two_days_leave(keep_latest, late_course):
    assert keep_latest["setup"].step("Check the rubric").stdout.count("late work: ") == 1
    assert keep_latest["gradebook"].result == "success", [
        (s.name, s.stderr[-800:]) for s in keep_latest["gradebook"].steps
    ]
    rows, (padding, late) = gradebook(late_course, 1), worth(late_course, "latest", PADDING)
    ben = rows["ben"]
    assert ben["commit"] == late_course["commits"]["ben", "1.5 days late"] and ben["days_late"] == "2"
    assert (float(ben["raw_total"]), float(ben["penalty"])) == (padding, late.penalty(padding, 2))
    assert float(ben["total"]) == pytest.approx(padding * (1 - 2 * late.per_day))
    ann = rows["ann"]
    assert (ann["days_late"], ann["penalty"], float(ann["total"])) == ("0", "0", padding)


def test_with_late_work_a_student_whose_only_commit_is_beyond_max_days_is_listed_without_a_grade(
    keep_latest, late_course
):
    _, late = worth(late_course, "latest", PADDING)
    cat = gradebook(late_course, 1)["cat"]
    assert cat["error"] == f"no commit within {late.max_days} days of the deadline {DEADLINE}" and cat["total"] == ""
    assert all(shard.result == "success" for shard in keep_latest["shards"].values()), "nothing to grade is no failure"


def test_with_keep_latest_the_last_commit_counts_even_when_the_on_time_one_scored_more(keep_latest, late_course):
    rows = gradebook(late_course, 1)
    (padding, late), (both, _) = worth(late_course, "latest", PADDING), worth(late_course, "latest", BOTH)
    assert rows["eve"]["commit"] == late_course["commits"]["eve", "20 hours late"]
    assert float(rows["eve"]["total"]) == both - late.penalty(both, 1)
    assert rows["fay"]["commit"] == late_course["commits"]["fay", "20 hours late"]
    assert float(rows["fay"]["total"]) == padding - late.penalty(padding, 1)


def fay_late(late_course: dict) -> str:
    return f"{late_course['commits']['fay', '20 hours late'][:12]} ({LATE_TIMES['20 hours late']}), 1 day late"


def test_with_keep_better_the_higher_of_the_on_time_and_the_late_grading_counts(keep_better, late_course):
    assert keep_better["gradebook"].result == "success"
    rows = gradebook(late_course, 2)
    (padding, late), (both, _) = worth(late_course, "better", PADDING), worth(late_course, "better", BOTH)
    eve, fay = rows["eve"], rows["fay"]
    assert both - late.penalty(both, 1) > padding, "eve's late work beats her on-time work after the penalty"
    assert (eve["commit"], eve["days_late"], float(eve["total"])) == (
        late_course["commits"]["eve", "20 hours late"],
        "1",
        max(padding, both - late.penalty(both, 1)),
    )
    assert (fay["commit"], fay["days_late"], float(fay["total"])) == (
        late_course["commits"]["fay", "on time"],
        "0",
        both,
    )
    step = "Check out each student's repository at their deadline (data only)"
    logs = "".join(shard.step(step).stdout for shard in keep_better["shards"].values())
    on_time = late_course["commits"]["fay", "on time"][:12]
    assert (
        f"course/fay-week07: checked out at {fay_late(late_course)}" in logs
        and f"last on-time commit {on_time}" in logs
    )
    overview = (late_course["root"] / "run-2" / "gradebook" / "gradebook" / "overview.md").read_text()
    assert f"- course/eve-week07: Commit {eve['commit'][:12]} was made 20 h after the deadline" in overview
    assert (
        f"- course/fay-week07: The last on-time commit, {fay['commit'][:12]}, counts with {both:g} points" in overview
    )


def test_with_late_work_each_students_feedback_says_what_was_applied_and_why(keep_better, late_course):
    issues = json.loads(late_course["gh_state"].read_text())["issues"]  # as this run left them
    bodies = {repository: listed[0]["body"] for repository, listed in issues.items()}
    assert set(bodies) == {f"course/{name}-week07" for name in ("ann", "ben", "eve", "fay")}, "cat has no grade"
    eve = gradebook(late_course, 2)["eve"]
    assert bodies["course/eve-week07"].startswith(f"**Your grade: {float(eve['total']):g} / {TOTAL:g}**")
    assert "Commit " + eve["commit"][:12] + " was made 20 h after the deadline" in bodies["course/eve-week07"]
    (padding, _), (both, _) = worth(late_course, "better", PADDING), worth(late_course, "better", BOTH)
    assert f"## Week 07 · Recurrent Networks: {both:g} / {TOTAL:g}" in bodies["course/eve-week07"], (
        "the late grading's summary"
    )
    assert f"## Week 07 · Recurrent Networks: {both:g} / {TOTAL:g}" in bodies["course/fay-week07"], "the on-time one's"
    assert bodies["course/ann-week07"].startswith(f"## Week 07 · Recurrent Networks: {padding:g} / {TOTAL:g}"), (
        "on time"
    )


def test_with_late_work_a_rerun_and_its_merge_never_apply_the_penalty_twice(keep_better, late_course):
    rerun = late_run(late_course, 3, "better", students="course/ben-week07", previous_run="2")
    assert rerun["gradebook"].result == "success"
    before, after = gradebook(late_course, 2), gradebook(late_course, 3)
    assert after["ben"]["graded at"] >= before["ben"]["graded at"]
    for name in before:
        unstamped = {column: value for column, value in after[name].items() if column != "graded at"}
        assert unstamped == {column: value for column, value in before[name].items() if column != "graded at"}, name


# -- a shard of hostile students --------------------------------------------------------------------------
CHECKOUT = "Check out each student's repository at their deadline (data only)"
CLONE_SECONDS = 30  # the test's bound on each student's clone: far beyond what a local clone takes, under any load
BAD_NAME = "x\n::error title=forged::pwned\n::add-mask::secret\n::stop-commands::tok\n<img src=x> @user"
HANG = """#!/bin/sh
# git upload-pack runs this instead of pack-objects: the slow student's server never answers
case "$PWD" in
  */slow-week07*) exec "{python}" -c "import time; time.sleep(3600)" {marker} ;;
esac
exec "$@"
"""


def commit_a_name_git_cannot_check_out(repository: Path, when: str) -> str:
    """A commit whose tree holds BAD_NAME/.git/config: git refuses to check it out, printing the name raw."""

    def objects(kind: str, data: bytes) -> str:
        return subprocess.run(
            ["git", kind, "-z"] if kind == "mktree" else ["git", kind, "-w", "--stdin"],
            cwd=repository, input=data, capture_output=True, check=True,
        ).stdout.decode().strip()  # fmt: skip

    config = objects("hash-object", b"[core]\n")
    dot_git = objects("mktree", f"100644 blob {config}\tconfig\0".encode())
    bad = objects("mktree", f"040000 tree {dot_git}\t.git\0".encode())
    listed = subprocess.run(["git", "ls-tree", "-z", "HEAD"], cwd=repository, capture_output=True, check=True).stdout
    tree = objects("mktree", listed + f"040000 tree {bad}\t{BAD_NAME}\0".encode())
    made = git(repository, "commit-tree", tree, "-p", "HEAD", "-m", "a name git refuses", when=when)
    git(repository, "update-ref", "refs/heads/main", made)
    return made


@pytest.fixture(scope="module")
def hostile_course(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """One shard of four: fine (padding done), tree (the same, in a fork holding every hostile name and
    1,100 nested folders), badname (a commit git cannot check out), slow (a server that never answers)."""
    root = tmp_path_factory.mktemp("hostile")
    remotes = root / "remotes" / "course"
    before = "2026-12-04T20:00:00+01:00"
    for name in ("fine", "tree", "badname", "slow"):
        commit(remotes / f"{name}-week07", before, padding_done=True)
    names = hostile.plant(remotes / "tree-week07")
    git(remotes / "tree-week07", "add", "-A")
    git(remotes / "tree-week07", "commit", "--quiet", "-m", "and much else", when=before)
    commit_a_name_git_cannot_check_out(remotes / "badname-week07", before)
    marker = f"hang-{secrets.token_hex(8)}"
    hook = workflow_runner.write_script(root / "hang.sh", "")
    hook.write_text(HANG.format(python=sys.executable, marker=marker))
    (root / "gitconfig").write_text(f"[uploadpack]\n\tpackObjectsHook = {hook}\n")
    stand_ins, gh_state = root / "stand-ins", root / "gh.json"
    stand_in_sudo(stand_ins, root / "sudo.log")
    stand_in_gh(stand_ins, gh_state)
    bin_folder = tools(root / "tools", sys.executable)
    env = environment(
        f"{stand_ins}:{bin_folder}:{os.environ['PATH']}",
        GITHUB_SERVER_URL=f"file://{root / 'remotes'}",
        GIT_CONFIG_GLOBAL=str(root / "gitconfig"),
    )
    bound = {
        CHECKOUT: lambda script: script.replace(
            "--results results", f"--results results --clone-timeout {CLONE_SECONDS}"
        )
    }
    runner = Runner(yaml.safe_load(WORKFLOW.read_text()), Artifacts(root / "artifacts"), env, INSTALLS, bound)
    course = {
        "root": root,
        "runner": runner,
        "gh_state": gh_state,
        "tools": bin_folder,
        "names": names,
        "marker": marker,
    }
    lines = [f"course/{name}-week07" for name in ("fine", "tree", "badname", "slow")]
    (root / "roster.txt").write_text("\n".join(lines) + "\n")
    course["jobs"] = run_workflow(course, 1, roster=str(root / "roster.txt"), shard_size=4)
    yield course
    hostile.remove(root)  # 1,100 nested folders: pytest's own clean-up recurses and cannot


def hostile_row(course: dict, name: str) -> dict[str, str]:
    return gradebook(course, 1)[name]


def test_a_shard_whose_clone_times_out_grades_the_others_and_names_that_student(hostile_course):
    shard = hostile_course["jobs"]["shards"][1]
    checkout = shard.step(CHECKOUT)
    assert checkout.status == 0, checkout.stderr[-2000:]
    assert f"took longer than the {CLONE_SECONDS} s each student's clone and checkout may take" in checkout.stdout
    assert processes_with(hostile_course["marker"]) == [], "git's server side was left running"
    assert shard.step("Grade the shard (as root, for isolation)").status == 0
    rows = gradebook(hostile_course, 1)
    assert float(rows["fine"]["total"]) == PADDING_POINTS and float(rows["tree"]["total"]) == PADDING_POINTS
    assert rows["slow"]["total"] == "" and "took longer than the" in rows["slow"]["error"]
    failed = shard.step("Every grading completed")
    assert failed.status == 1 and "course/slow-week07" in failed.stdout and "course/badname-week07" in failed.stdout
    assert "course/fine-week07" not in failed.stdout and "course/tree-week07" not in failed.stdout


def test_a_name_that_breaks_the_checkout_starts_no_workflow_command_and_stays_inert(hostile_course):
    shard = hostile_course["jobs"]["shards"][1]
    checkout = shard.step(CHECKOUT)
    assert hostile.workflow_commands(checkout.stdout + checkout.stderr) == []
    assert "could not check out" in checkout.stdout and "\\n::error title=forged::pwned" in checkout.stdout
    commands = hostile.workflow_commands(shard.step("Every grading completed").stdout)
    assert len(commands) == 2 and all(line.startswith("::error title=grading failed for course/") for line in commands)
    assert "could not check out" in hostile_row(hostile_course, "badname")["error"]
    headings = [f"Gradebook · {TITLE}", "Students", "Full marks per item", "Grading failed: regrade or follow up"]
    headings += ["What to re-teach: the misconceptions named most often", "Items that tell you little"]
    summary = hostile_course["jobs"]["gradebook"].summary
    assert hostile.live(summary, [hostile.shown(BAD_NAME)], headings) == []


def test_a_fork_with_a_hostile_tree_is_graded_and_its_reports_and_feedback_issue_are_inert(hostile_course):
    names, shard = hostile_course["names"], hostile_course["jobs"]["shards"][1]
    record = hostile_course["root"] / "run-1" / "grade-1" / "results" / "course__tree-week07"
    document = json.loads((record / "results.json").read_text(encoding="utf-8"))
    assert document["score"] == PADDING_POINTS and set(names) <= set(document["extra_data"]["ignored_files"])
    headings = [f"{TITLE}: {PADDING_POINTS:g} / {TOTAL:g}", "What to fix", "Not read by the grader"]
    assert hostile.live((record / "summary.md").read_text(encoding="utf-8"), names, headings) == []
    issue = json.loads(hostile_course["gh_state"].read_text())["issues"]["course/tree-week07"][0]
    assert hostile.live(issue["body"], names, headings) == [], "the feedback issue, posted under the instructor's token"
    grading = shard.step("Grade the shard (as root, for isolation)")
    assert hostile.workflow_commands(grading.stdout + grading.stderr) == []
    shard_headings = [f"Gradebook · {TITLE}", "Students", "Full marks per item", "Grading failed: regrade or follow up"]
    assert hostile.live(shard.summary, [], shard_headings) == []


# -- a hostile student in the job as deployed ---------------------------------------------------------
@pytest.fixture(scope="module")
def attacked_shard(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One student, eve: the reference, but set_forget_bias imports the instructor's or reads it from disk
    (tests/attacks' import_solutions); the roster's setup and shard jobs, the grading as root under sudo."""
    root = tmp_path_factory.mktemp("attacked")
    repository = root / "remotes" / "course" / "eve-week07"
    attack = suite.SUBMISSIONS / "import_solutions" / "exercises" / "initialisation.py"
    commit(repository, "2026-12-04T20:00:00+01:00", padding_done=True)
    for path in SOLUTIONS.glob("*.py"):
        shutil.copyfile(path, repository / "exercises" / path.name)
    laid = suite.laid_over(SOLUTIONS, Path("exercises/initialisation.py"), attack.read_text())
    (repository / "exercises" / "initialisation.py").write_text(laid)
    git(repository, "commit", "--quiet", "-am", "the attack", when="2026-12-04T21:00:00+01:00")
    stand_ins, bin_folder = root / "stand-ins", tools(root / "tools", sys.executable)
    stand_in_sudo(stand_ins, root / "sudo.log")
    env = environment(f"{stand_ins}:{bin_folder}:{os.environ['PATH']}", GITHUB_SERVER_URL=f"file://{root / 'remotes'}")
    runner = Runner(yaml.safe_load(WORKFLOW.read_text()), Artifacts(root / "artifacts"), env, left_out=INSTALLS)
    (root / "roster.txt").write_text("course/eve-week07\n")
    inputs = {"deadline": DEADLINE, "max_parallel": 1, "shard_size": 30, "students": "", "shards": "",
              "previous_run": "", "feedback": False, "roster": str(root / "roster.txt"),
              "rubric": "autograder/rubric.toml"}  # fmt: skip
    setup = runner.run_job("setup", 1, Context(inputs, {"token": "run-token"}), root / "setup")
    entry = json.loads(setup.outputs["matrix"])["include"][0]
    workspace = root / "grade-1"
    workspace.mkdir()
    (workspace / "grader-venv").symlink_to(deployed.venv())  # what the left-out install step makes
    needs = {"setup": {"result": setup.result, "outputs": setup.outputs}}
    job = runner.run_job("grade", 1, Context(inputs, {"token": "run-token"}, matrix=entry, needs=needs), workspace)
    results = workspace / "results" / "course__eve-week07" / "results.json"
    return {"job": job, "results": json.loads(results.read_text()), "sudo": (root / "sudo.log").read_text()}


def test_the_shard_job_as_deployed_gives_an_attack_on_the_reference_nothing_and_records_its_isolation(
    attacked_shard,
):
    job, document = attacked_shard["job"], attacked_shard["results"]
    assert job.result == "success", [(step.name, step.stderr[-2000:]) for step in job.steps if step.status]
    assert f"{deployed.venv().parent.name}" not in attacked_shard["sudo"]  # called through the job's own venv path
    scores = {test["name"]: (test["score"], test["max_score"]) for test in document["tests"]}
    attacked = {item.name for item in rubric.load().items if item.function == "set_forget_bias"}
    assert attacked and all(scores[name][0] == 0 for name in attacked), scores
    assert all(score == most for name, (score, most) in scores.items() if name not in attacked), scores
    isolation = record.from_dict(document["extra_data"]["isolation"])
    assert document["extra_data"]["isolation_required"] is True and isolation.missing() == []
    groups = cgroup.available(cgroup.find()).in_force  # the job runs as root: its workers' cgroups where writable
    in_force = [name for name in record.LAYERS if name != "cgroup" or groups]
    assert [name for name in record.LAYERS if isolation.layer(name).in_force] == in_force


GRADE_STEP = "Grade the shard (as root, for isolation)"


@pytest.fixture(scope="module")
def spent_shard(first_run, course) -> dict:
    """The first run's roster again, in shards whose job started SHARD_MINUTES ago: no time is left to grade."""
    clock = {"Start the shard's clock": lambda script: "echo $(( $(date +%s) - SHARD_MINUTES * 60 )) > shard-started"}
    late = {**course, "runner": dataclasses.replace(course["runner"], edits=clock)}
    extensions = {"bob": "2026-12-06T23:59:00+01:00"}
    return run_workflow(late, 7, roster=str(roster(course, 7, extensions)), feedback=False)


def test_a_shard_out_of_time_uploads_what_it_has_and_the_merge_and_gradebook_name_each_student_cut(spent_shard, course):
    shard = spent_shard["shards"][1]
    assert shard.step(GRADE_STEP).status == 3, shard.step(GRADE_STEP).stderr[-2000:]
    assert "2 student(s) not graded because of a grader error" in shard.step(GRADE_STEP).stderr
    assert shard.step("Stamp the gradings").status == 0
    assert shard.step("actions/upload-artifact").ran and shard.step("actions/upload-artifact").status == 0
    check = shard.step("Every grading completed")
    assert check.ran and "course/alice-week07" in check.stdout and "course/bob-week07" in check.stdout
    merged = spent_shard["gradebook"].step("Merge, keeping each student's newest grading").stdout
    for name in ("alice", "bob"):
        assert f"no grade for course__{name}-week07: not graded: grader error" in merged
        row = gradebook(course, 7)[name]
        assert row["total"] == "" and row["error"].startswith("not graded: grader error"), row
        assert "the run's time budget ran out before this grading could start" in row["error"]

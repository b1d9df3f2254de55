"""The roster workflow run here end to end: shards, per-student deadlines, re-runs, the merge, feedback.

Its jobs run step by step as a runner runs them (tests/helpers/workflow_runner.py): the grading
step verbatim, under a stand-in `sudo` that resets the environment as sudo does, with the grader
the job's own install step put in its venv (tests/helpers/deployed.py: not editable), over git
repositories standing in for the students' (commits dated around the deadline), cloned through
$GITHUB_SERVER_URL; the feedback step against a stand-in `gh`. Three runs: the whole roster, a
re-run of one student who got an extension, a re-run of one shard; each merged with the last.
"""

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import attack_suite as suite
import deployed
import pytest
import yaml
from support import EXERCISES, ROOT, SOLUTIONS
from workflow_runner import Artifacts, Context, Runner, environment, evaluate, stand_in_gh, stand_in_sudo, tools

from autograder import rubric
from autograder.feedback import ISSUE_TITLE
from autograder.sandbox import record

WORKFLOW = ROOT / ".github" / "workflows" / "grade-roster.yml"
DEADLINE = "2026-12-04T23:59:00+01:00"
INSTALLS = ("Install CPU torch and the grader", "Install CPU torch and the grader (with the report's charts)")
# the students' gradings use the stubs and the reference's padding.py: quick to grade, 20 points
PADDING_POINTS = sum(
    item.points for item in rubric.load().items if item.function in ("encode_packed", "gather_final", "masked_mean")
)
TOTAL = rubric.load().total


def git(repository: Path, *arguments: str, when: str | None = None) -> str:
    dates = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when} if when else {}
    identity = ["-c", "user.name=Student", "-c", "user.email=student@example.org", "-c", "commit.gpgsign=false"]
    done = subprocess.run(
        ["git", *identity, *arguments], cwd=repository, env={**os.environ, **dates}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def commit(repository: Path, when: str, padding_done: bool) -> str:
    """A commit of the student's exercises/: the stubs, with the reference's padding.py when it is done."""
    (repository / "exercises").mkdir(parents=True, exist_ok=True)
    if not (repository / ".git").exists():
        git(repository, "init", "--quiet", "--initial-branch=main")
    for path in EXERCISES.glob("*.py"):
        shutil.copyfile(path, repository / "exercises" / path.name)
    if padding_done:
        shutil.copyfile(SOLUTIONS / "padding.py", repository / "exercises" / "padding.py")
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
    stand_ins, sudo_log, gh_state = root / "stand-ins", root / "sudo.log", root / "gh.json"
    stand_in_sudo(stand_ins, sudo_log)
    stand_in_gh(stand_ins, gh_state)
    bin_folder = tools(root / "tools", sys.executable)
    env = environment(f"{stand_ins}:{bin_folder}:{os.environ['PATH']}", GITHUB_SERVER_URL=f"file://{root / 'remotes'}")
    workflow = yaml.safe_load(WORKFLOW.read_text())
    runner = Runner(workflow, Artifacts(root / "artifacts"), env, left_out=INSTALLS)
    return {
        "root": root,
        "runner": runner,
        "commits": commits,
        "sudo_log": sudo_log,
        "gh_state": gh_state,
        "tools": bin_folder,
    }


def roster(course: dict, run: int, extensions: dict[str, str]) -> Path:
    lines = [f"course/{name}-week07  {extensions.get(name, '')}".rstrip() for name in ("alice", "bob", "carol", "dan")]
    path = course["root"] / f"roster-{run}.txt"
    path.write_text("# week 7\n" + "\n".join(lines) + "\n")
    return path


def run_workflow(course: dict, run: int, **inputs: object) -> dict:
    """One run: setup, every shard of its matrix, the gradebook, and feedback when its job would run."""
    runner, root = course["runner"], course["root"] / f"run-{run}"
    inputs = {"deadline": DEADLINE, "max_parallel": 20, "shard_size": 2, "students": "", "shards": "",
              "previous_run": "", "feedback": True, **inputs}  # fmt: skip
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
    assert grading[0] == f"{venv}/bin/autograde grade-all submissions --out results --jobs {cores} --require-isolation"
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
              "previous_run": "", "feedback": False, "roster": str(root / "roster.txt")}  # fmt: skip
    setup = runner.run_job("setup", 1, Context(inputs, {"token": "run-token"}), root / "setup")
    entry = json.loads(setup.outputs["matrix"])["include"][0]
    workspace = root / "grade-1"
    workspace.mkdir()
    (workspace / "grader-venv").symlink_to(deployed.venv())  # what the left-out install step makes
    needs = {"setup": {"result": setup.result, "outputs": setup.outputs}}
    job = runner.run_job("grade", 1, Context(inputs, {"token": "run-token"}, matrix=entry, needs=needs), workspace)
    results = workspace / "results" / "course__eve-week07" / "results.json"
    return {"job": job, "results": json.loads(results.read_text()), "sudo": (root / "sudo.log").read_text()}


@pytest.mark.slow
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
    assert [name for name in record.LAYERS if isolation.layer(name).in_force] == list(record.LAYERS)

"""The GitHub workflows, this repository's and the student release's (plain and for GitHub Classroom): linted,
pinned, least privilege."""

import re
from pathlib import Path

import pytest
import yaml
from support import ROOT
from workflow_lint import actionlint, zizmor

from autograder import cli
from autograder.locations import RUBRIC
from autograder.release import classroom, student_repository
from autograder.roster import shards

USES = re.compile(r"^\s*(?:-\s*)?uses:\s*(\S+?)@(\S+)(.*)$", re.MULTILINE)


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("student") / "repository"
    student_repository.release(target)
    return target


@pytest.fixture(scope="module")
def for_classroom(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release of `autograde release --classroom`."""
    target = tmp_path_factory.mktemp("student") / "classroom"
    assert cli.main(["release", str(target), "--classroom"]) == 0
    return target


@pytest.fixture(scope="module")
def workflows(released: Path, for_classroom: Path) -> list[Path]:
    found = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    for student in (released, for_classroom):
        found += sorted((student / ".github" / "workflows").glob("*.yml"))
    assert [path.name for path in found].count("public-tests.yml") == 2
    assert {path.name for path in found} >= {"ci.yml", "grade-roster.yml", "public-tests.yml"}
    return found


def load(path: Path) -> dict:
    document = yaml.safe_load(path.read_text())
    document["on"] = document.pop(True, document.get("on"))  # YAML 1.1 reads the key `on` as true
    return document


def steps(job: dict) -> list[dict]:
    return job.get("steps", [])


def test_every_workflow_passes_actionlint(workflows):
    findings = actionlint(workflows)
    assert findings == [], "\n".join(f"{f['file']}:{f['line']}:{f['column']}: {f['message']}" for f in findings)


def test_every_workflow_passes_zizmor_offline(released, for_classroom):
    for target in (ROOT / ".github" / "workflows", released, for_classroom):
        done = zizmor([target])
        assert done.returncode == 0, done.stdout + done.stderr


def test_every_action_is_pinned_to_a_full_commit_with_its_version_beside_it(workflows):
    pins: dict[str, set[str]] = {}
    for path in workflows:
        for action, ref, comment in USES.findall(path.read_text()):
            assert re.fullmatch(r"[0-9a-f]{40}", ref), f"{path.name}: {action}@{ref} is not a commit"
            assert re.match(r"\s+# v\d", comment), f"{path.name}: {action}@{ref} has no '# vN' comment"
            pins.setdefault(action, set()).add(f"{ref}{comment.strip()}")
    assert {action: len(refs) for action, refs in pins.items()} == dict.fromkeys(pins, 1), pins


# The only jobs that may read more: Classroom's reporter, with what its README at v1 grants (it writes nothing),
# and the roster's gradebook, which downloads the results of the run a re-run completes (the same two).
REPORTER_PERMISSIONS = {"actions": "read", "contents": "read"}
ROSTER_GRADEBOOK = ("grade-roster.yml", "gradebook")


def test_every_workflow_reads_contents_only_and_keeps_no_credentials(workflows):
    for path in workflows:
        document = load(path)
        assert document["permissions"] == {"contents": "read"}, path.name
        for name, job in document["jobs"].items():
            reports = any(step.get("uses", "").startswith(f"{classroom.REPORTER}@") for step in steps(job))
            wider = reports or (path.name, name) == ROSTER_GRADEBOOK
            expected = REPORTER_PERMISSIONS if wider else {}
            assert job.get("permissions", {}) == expected, f"{path.name}: {name} widens its permissions"
            for step in steps(job):
                if step.get("uses", "").startswith("actions/checkout@"):
                    assert step["with"]["persist-credentials"] is False, f"{path.name}: {name} keeps credentials"


def roster_jobs() -> dict[str, dict]:
    return load(ROOT / ".github" / "workflows" / "grade-roster.yml")["jobs"]


def runs(job: dict) -> str:
    return "\n".join(step.get("run", "") for step in steps(job))


def test_the_roster_workflow_grades_shards_from_the_roster_and_can_rerun_students_or_shards():
    document = load(ROOT / ".github" / "workflows" / "grade-roster.yml")
    inputs = document["on"]["workflow_dispatch"]["inputs"]
    assert set(inputs) == {
        "roster",
        "deadline",
        "max_parallel",
        "shard_size",
        "students",
        "shards",
        "previous_run",
        "feedback",
        "rubric",
    }
    assert inputs["shard_size"]["default"] == shards.SHARD_SIZE
    setup, grade = roster_jobs()["setup"], roster_jobs()["grade"]
    assert "python3 -m autograder.roster.shards" in runs(setup)
    for option in ("--shard-size", "--students", "--shards"):
        assert option in runs(setup)
    assert grade["strategy"]["max-parallel"] == "${{ inputs.max_parallel }}"
    assert grade["strategy"]["matrix"] == "${{ fromJSON(needs.setup.outputs.matrix) }}"


def test_every_job_grades_merges_and_reports_by_the_rubric_it_is_given():
    jobs = roster_jobs()
    check = next(step for step in steps(jobs["setup"]) if step.get("name") == "Check the rubric")
    assert check["run"] == 'python3 -m autograder.rubric "$RUBRIC"', "checked before any shard starts"
    default = load(ROOT / ".github" / "workflows" / "grade-roster.yml")["on"]["workflow_dispatch"]["inputs"]["rubric"]
    assert (ROOT / default["default"]).read_text() == RUBRIC.read_text(), "the grader's own by default"
    for name, job in jobs.items():
        for step in steps(job):
            command = step.get("run", "")
            if re.search(r"autograde (grade-all|gradebook|report) |shard_job |roster\.issues ", command):
                assert '--rubric "$RUBRIC"' in command, f"{name}: {step.get('name')}"
                where = "grader/" if name == "grade" else ""
                assert step["env"]["RUBRIC"] == where + "${{ inputs.rubric }}", f"{name}: {step.get('name')}"


def test_its_shards_grade_as_root_with_the_grader_by_its_path_and_hold_no_secret():
    grade = roster_jobs()["grade"]
    assert "secrets." not in yaml.safe_dump(grade)
    assert not any(step.get("with", {}).get("repository") for step in steps(grade)), "students are cloned as data"
    script = runs(grade)
    assert 'python -m venv "$VENV"' in script and '"$VENV/bin/python" -m pip install --no-deps ./grader' in script
    grading = 'sudo "$VENV/bin/autograde" grade-all submissions --out results --jobs "$(nproc)" --require-isolation'
    assert grading in script
    assert "--no-require-isolation" not in script, "grades that count are graded under isolation"
    assert 'sudo chown -R "$(id -u):$(id -g)" results' in script
    upload = next(step for step in steps(grade) if step.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["if"] == "${{ !cancelled() }}" and upload["with"]["overwrite"] is True


def test_its_shards_end_their_gradings_before_the_jobs_timeout_so_that_the_grades_made_are_uploaded():
    grade = roster_jobs()["grade"]
    assert grade["timeout-minutes"] == grade["env"]["SHARD_MINUTES"], "the budget is reckoned from the timeout"
    assert 0 < grade["env"]["UPLOAD_MINUTES"] < grade["env"]["SHARD_MINUTES"]
    assert steps(grade)[0]["run"] == "date +%s > shard-started", "the clock starts with the job"
    grading = next(step for step in steps(grade) if step.get("name") == "Grade the shard (as root, for isolation)")
    assert '--time-budget "$budget"' in grading["run"] and "$(cat shard-started)" in grading["run"]
    after = steps(grade)[steps(grade).index(grading) + 1 :]
    assert all(step.get("if") == "${{ !cancelled() }}" for step in after), "they run after a grading step that failed"


def test_its_gradebook_merges_this_runs_gradings_with_the_previous_runs_results():
    gradebook = roster_jobs()["gradebook"]
    assert gradebook["needs"] == ["setup", "grade"]
    assert gradebook["if"] == "${{ !cancelled() && needs.setup.result == 'success' }}"
    previous = next(step for step in steps(gradebook) if step.get("with", {}).get("run-id"))
    assert previous["if"] == "${{ inputs.previous_run != '' }}" and previous["with"]["name"] == "results"
    assert "autograde merge previous new --out results" in runs(gradebook)
    assert 'autograde gradebook results --out gradebook --roster "$ROSTER"' in runs(gradebook)
    uploads = [step["with"]["name"] for step in steps(gradebook) if step.get("uses", "").startswith("actions/upload")]
    assert uploads == ["gradebook", "results", "modules"]


def test_its_feedback_job_alone_holds_the_token_and_never_touches_student_code():
    jobs = roster_jobs()
    holders = [name for name, job in jobs.items() if "secrets.FEEDBACK_TOKEN" in yaml.safe_dump(job)]
    assert holders == ["setup", "feedback"]
    assert "${{ secrets.FEEDBACK_TOKEN != '' }}" in yaml.safe_dump(jobs["setup"]), "setup only asks whether it is set"
    job = jobs["feedback"]
    assert "needs.setup.outputs.feedback == 'true'" in job["if"] and "needs.gradebook.result == 'success'" in job["if"]
    assert [step.get("uses", "").split("@")[0] for step in steps(job) if "uses" in step] == [
        "actions/checkout",
        "actions/download-artifact",
    ]
    assert not any(step.get("with", {}).get("repository") for step in steps(job))
    assert "pip install" not in runs(job) and not re.search(r"\bautograde\b", runs(job)), "no grading here"
    post = steps(job)[-1]
    assert post["env"]["GH_TOKEN"] == "${{ secrets.FEEDBACK_TOKEN }}"
    assert post["run"] == 'python3 -m autograder.roster.issues graded --roster "$ROSTER" --rubric "$RUBRIC"'


def test_the_roster_workflows_gradebook_job_writes_the_class_report_and_summarises_the_misconceptions():
    gradebook = load(ROOT / ".github" / "workflows" / "grade-roster.yml")["jobs"]["gradebook"]
    runs = "\n".join(step.get("run", "") for step in steps(gradebook))
    assert 'python -m pip install ".[report]"' in runs
    assert 'autograde report results --out gradebook --roster "$ROSTER"' in runs
    assert 'cat gradebook/misconceptions.md >> "$GITHUB_STEP_SUMMARY"' in runs
    upload = next(step for step in steps(gradebook) if step.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["with"]["path"] == "gradebook"  # report.html goes up with the gradebook


def test_its_shards_keep_the_week_modules_before_any_student_code_runs_in_an_artifact_of_their_own():
    grade = roster_jobs()["grade"]
    names = [step.get("name", step.get("uses", "")) for step in steps(grade)]
    keep = next(step for step in steps(grade) if "autograder.roster.modules keep" in step.get("run", ""))
    assert names.index(keep["name"]) < names.index("Grade the shard (as root, for isolation)")
    uploads = [step["with"] for step in steps(grade) if step.get("uses", "").startswith("actions/upload-artifact@")]
    assert [(upload["name"], upload["path"]) for upload in uploads] == [
        ("grading-shard-${{ matrix.shard }}", "results"),
        ("modules-shard-${{ matrix.shard }}", "modules"),
    ]
    feedback = roster_jobs()["feedback"]
    patterns = [step["with"].get("pattern") for step in steps(feedback) if "with" in step and "pattern" in step["with"]]
    assert patterns == ["grading-*"], "the feedback job, which holds the token, takes no student code"


def test_its_gradebook_job_compares_the_modules_of_the_gradings_kept_before_the_report_links_to_the_page():
    gradebook = roster_jobs()["gradebook"]
    names = [step.get("name", "") for step in steps(gradebook)]
    similarity = next(step for step in steps(gradebook) if "autograde similarity" in step.get("run", ""))
    assert "modules pick results --from modules-new modules-previous --out modules" in similarity["run"]
    assert "autograde similarity modules --out gradebook" in similarity["run"]  # the command's contract
    assert "|| echo" in similarity["run"], "a failed comparison leaves the gradebook and the report to go up"
    report = next(name for name in names if name.startswith("Class report"))
    assert names.index(similarity["name"]) < names.index(report)
    previous = next(step for step in steps(gradebook) if step.get("with", {}).get("pattern") == "modules")
    assert previous["if"] == "${{ inputs.previous_run != '' }}" and previous["with"]["run-id"]


def test_this_repositorys_ci_gives_the_browser_test_the_runners_chrome_and_refuses_unlisted_skips():
    tests = load(ROOT / ".github" / "workflows" / "ci.yml")["jobs"]["tests"]
    step = next(step for step in steps(tests) if "python -m pytest" in step.get("run", ""))
    assert "--preserve-env" in step["run"]  # under sudo, the step's environment must reach pytest
    assert step["env"]["REPORT_BROWSER"] == "google-chrome"
    assert step["env"]["CI_ALLOWED_SKIPS"] == ".ci/allowed-skips"


def test_the_student_workflow_runs_the_public_tests_and_summarises_them_per_todo(released):
    document = load(released / student_repository.WORKFLOW)
    assert set(document["on"]) == {"push", "pull_request"}
    job = document["jobs"]["public-tests"]
    python = next(step for step in steps(job) if step.get("uses", "").startswith("actions/setup-python@"))
    assert python["with"]["python-version"] == "3.11"
    runs = [step.get("run", "") for step in steps(job)]
    assert ".venv/bin/python -m pytest --junitxml=public-tests.xml" in runs
    summary = next(step for step in steps(job) if "summarize.py" in step.get("run", ""))
    assert summary["id"] == "public-tests" and summary["if"] == "${{ !cancelled() }}"


def test_the_student_workflow_restores_its_environment_from_a_cache_keyed_on_the_shipped_lock(released):
    job = load(released / student_repository.WORKFLOW)["jobs"]["public-tests"]
    names = [step.get("id") or step.get("name") for step in steps(job)]
    cache = next(step for step in steps(job) if step.get("uses", "").startswith("actions/cache@"))
    python = next(step for step in steps(job) if step.get("uses", "").startswith("actions/setup-python@"))
    assert cache["with"]["path"] == ".venv"
    key = cache["with"]["key"]
    assert f"${{{{ hashFiles('{student_repository.STUDENT_LOCK}') }}}}" in key
    assert "${{ runner.os }}" in key and f"${{{{ steps.{python['id']}.outputs.python-version }}}}" in key
    assert "cache" not in python["with"]  # one cache: the environment, not pip's downloads of it
    install = next(step for step in steps(job) if "pip install" in step.get("run", ""))
    assert install["if"] == f"steps.{cache['id']}.outputs.cache-hit != 'true'"  # a warm push installs nothing
    command = " ".join(install["run"].replace("\\\n", " ").split())
    assert f".venv/bin/python -m pip install --require-hashes --no-deps -r {student_repository.STUDENT_LOCK}" in command
    assert names.index(cache["id"]) < names.index(install["name"]) < names.index("public-tests")
    assert (released / student_repository.STUDENT_LOCK).is_file()


def test_the_student_workflows_preview_grade_runs_only_when_the_instructor_enables_it(released):
    job = load(released / student_repository.WORKFLOW)["jobs"]["preview-grade"]
    assert job["if"] == "${{ vars.GRADER_REPOSITORY != '' }}"
    assert "feedback, not the grade" in job["name"]
    assert any(step.get("run") == "autograde grade . --out preview" for step in steps(job))


def test_this_repositorys_ci_lints_tests_and_builds_the_release():
    runs = "\n".join(
        step.get("run", "")
        for job in load(ROOT / ".github" / "workflows" / "ci.yml")["jobs"].values()
        for step in steps(job)
    )
    for command in ("ruff check .", "ruff format --check .", "python -m pytest", "autograde release "):
        assert command in runs


def test_this_repositorys_ci_runs_the_tests_as_root_so_that_every_isolation_tier_runs():
    tests = load(ROOT / ".github" / "workflows" / "ci.yml")["jobs"]["tests"]
    runs = [step["run"] for step in steps(tests) if "python -m pytest" in step.get("run", "")]
    assert runs and all(run.startswith("sudo ") for run in runs), runs


def test_the_classroom_release_reports_each_todo_to_classrooms_reporter_pinned_to_v1(released, for_classroom):
    plain, document = load(released / student_repository.WORKFLOW), load(for_classroom / student_repository.WORKFLOW)
    assert document["name"] == "Autograding Tests" and plain["name"] == "Public tests"
    assert set(document["on"]) == {"push", "pull_request", "repository_dispatch"}
    job = document["jobs"]["public-tests"]
    assert job["if"] == "github.actor != 'github-classroom[bot]'"
    assert job["permissions"] == REPORTER_PERMISSIONS
    reporter = steps(job)[-1]
    assert reporter["uses"] == f"{classroom.REPORTER}@d13b5912daf5042ac1b71bc38bdb4a6bcd61d8ca"  # tag v1
    summary = next(step for step in steps(job) if "summarize.py" in step.get("run", ""))
    runners = reporter["with"]["runners"].split(",")
    assert runners == [summary["id"]]  # the reporter reads <RUNNER>_RESULTS, the runner id upper-cased
    assert reporter["env"] == {f"{summary['id'].upper()}_RESULTS": f"${{{{ steps.{summary['id']}.outputs.result }}}}"}
    assert reporter["if"] == "${{ !cancelled() }}"  # it reports failing tests too
    without = {name: value for name, value in document["jobs"].items()}
    without["public-tests"] = {key: value for key, value in job.items() if key not in ("if", "permissions")} | {
        "steps": steps(job)[:-1]
    }
    assert without == plain["jobs"], "the Classroom form adds the reporter and nothing else"

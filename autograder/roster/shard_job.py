"""What a shard job of the roster workflow does around `autograde grade-all`.

    python -m autograder.roster.shard_job checkout SHARD_JSON --submissions DIR --results DIR [--rubric FILE]
    python -m autograder.roster.shard_job finish RESULTS_DIR [--rubric FILE]
    python -m autograder.roster.shard_job check RESULTS_DIR [--rubric FILE]

`checkout` clones each student of the shard (a JSON list of {repository, deadline}, from the
workflow's matrix) into SUBMISSIONS/<owner__name>, at the last commit before the student's
deadline, and records in RESULTS/<owner__name>/ the repository (`student`), the deadline applied
(`deadline`), the commit (`commit`) and its committer time (`commit-time`), or why there is nothing
to grade (`error`). Clones carry no credentials, so only public repositories can be read. Each
student's clone and checkouts together get CLONE_TIMEOUT seconds: one that fails, hangs or times
out is recorded for that student (git and everything it started killed), and the others go on.
What git says about a student's repository (their file names) is written on one escaped line.
With the rubric's [late], the commit is the last at most `max_days` after the deadline, and its
`days-late` is recorded too; with `keep = "better"` and a late last commit, the last on-time commit
is checked out beside it (SUBMISSIONS/<owner__name>@on-time, recorded in RESULTS/<owner__name>@on-time)
and grade-all grades it like any other folder.
`finish` moves each on-time grading into its student's folder (RESULTS/<owner__name>/on-time, where
the gradebook compares the two), stamps every grading with the time it was made (`graded-at`: the
merge keeps each student's newest), records why a student checked out has no results.json (`error`),
shows the shard's overview on its job's page and drops
grade-all's gradebook and report of the shard (the gradebook job writes the roster's), so that the
shard's artifact holds only the students' folders. `check` exits 1 naming every student whose
grading failed, so the job shows red and can be re-run. Standard library only.
"""

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NamedTuple

from autograder.grading.submission import remove_tree
from autograder.roster import gradebook
from autograder.roster.gradebook import moment
from autograder.roster.shards import artifact_id
from autograder.rubric import Late, Rubric, RubricError, days, load
from autograder.text import escaped, workflow_command

NO_COMMIT = "no commit before the deadline"
NOTHING_TO_GRADE = "no commit "  # how both reasons for no grading begin: not a failed job
ALSO_ON_TIME = "@on-time"  # a folder's suffix for the last on-time commit (keep = "better"); not in a repository name
CLONE_TIMEOUT = 300.0  # seconds for one student's clone and checkouts together
MAX_GIT_MESSAGE = 500  # characters of git's message kept in a student's record


class GitTimeout(Exception):
    """A git command ran past the student's time; str() says so."""


class Git:
    """git for one student: every call within the same time, none asking for credentials."""

    def __init__(self, seconds: float = CLONE_TIMEOUT) -> None:
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds

    def __call__(self, *arguments: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        environment = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": ""}
        command = ["git", "-c", "credential.helper=", "-c", "advice.detachedHead=false", *arguments]
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise GitTimeout(self._late())
        process = subprocess.Popen(
            command, cwd=cwd, env=environment, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True,
        )  # fmt: skip
        try:
            stdout, stderr = process.communicate(timeout=left)
        except subprocess.TimeoutExpired:
            _kill_group(process)  # git's helpers (remote-https, index-pack) hold its pipes: they go too
            raise GitTimeout(self._late()) from None
        return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)

    def _late(self) -> str:
        return f"git took longer than the {self.seconds:g} s each student's clone and checkout may take"


def _kill_group(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.communicate()


def said(message: str) -> str:
    """git's message about a student's repository (which names their files), on one escaped line."""
    shown = escaped(message.strip())
    return shown if len(shown) <= MAX_GIT_MESSAGE else shown[: MAX_GIT_MESSAGE - 3] + "..."


def _write(folder: Path, name: str, text: str) -> None:
    (folder / name).write_text(text + "\n", encoding="utf-8")


def checkout(
    repository: str,
    deadline: str,
    server: str,
    submissions: Path,
    results: Path,
    late: Late | None = None,
    seconds: float = CLONE_TIMEOUT,
) -> str:
    """Clone one student at their deadline (with `late`, up to its max_days after it); return '' or the
    reason there is nothing to grade."""
    target, record = submissions / artifact_id(repository), results / artifact_id(repository)
    record.mkdir(parents=True, exist_ok=True)
    _write(record, "student", repository)
    _write(record, "deadline", deadline)
    url = f"{server.rstrip('/')}/{repository}"
    try:
        error = _clone(Git(seconds), url, target, record, deadline, late)
    except GitTimeout as too_late:
        error = f"could not clone {url}: {too_late}"
    except (OSError, ValueError) as problem:  # git missing, a folder that cannot be written: this student only
        error = f"could not clone {url}: {type(problem).__name__}: {said(str(problem))}"
    if error:
        _write(record, "error", error)
        for folder in (target, beside(target), beside(record)):
            _remove(folder)
    return error


def _clone(git: Git, url: str, target: Path, record: Path, deadline: str, late: Late | None) -> str:
    cloned = git("clone", "--quiet", "--no-checkout", "--filter=blob:none", url, str(target))
    if cloned.returncode != 0:
        lines = cloned.stderr.strip().splitlines() or ["git clone failed"]
        why = next((line for line in lines if line.startswith("fatal:")), lines[-1])
        return f"could not clone {url} (is it public? this job has no credentials): {said(why)}"
    return _check_out(git, target, record, deadline, late)


def _last_before(git: Git, target: Path, moment: str) -> str:
    """The last commit of HEAD's history whose committer date is not after `moment`; '' when none is."""
    return git("rev-list", "-1", f"--before={moment}", "HEAD", cwd=target).stdout.strip()


def beside(folder: Path) -> Path:
    """Where a student's last on-time commit goes beside their folder (keep = "better"), until `finish`."""
    return folder.with_name(folder.name + ALSO_ON_TIME)


def _check_out(git: Git, target: Path, record: Path, deadline: str, late: Late | None) -> str:
    """Check out the commit to grade (and, with keep = "better", the last on-time one beside it); '' or why not."""
    limit = deadline if late is None else (moment(deadline) + timedelta(days=late.max_days)).isoformat()
    commit = _last_before(git, target, limit)
    if not commit:
        return _nothing_to_grade(deadline, late)
    error = _move(git, target, record, commit, deadline, late)
    on_time = _last_before(git, target, deadline) if late and late.keep == "better" and not error else ""
    if on_time and on_time != commit:
        error = _also_on_time(git, target, record, on_time, deadline, late)
    return error


def _nothing_to_grade(deadline: str, late: Late | None) -> str:
    if late is None or late.max_days == 0:
        return f"{NO_COMMIT} {deadline}"
    return f"no commit within {days(late.max_days)} of the deadline {deadline}"


def _move(git: Git, target: Path, record: Path, commit: str, deadline: str, late: Late | None) -> str:
    """Check `commit` out in `target` and record it, its committer time (and with `late`, its days late)."""
    _record(git, target, record, commit, deadline, late)
    moved = git("checkout", "--quiet", commit, cwd=target)
    return f"could not check out {commit}: {said(moved.stderr)}" if moved.returncode else ""


def _record(git: Git, target: Path, record: Path, commit: str, deadline: str, late: Late | None) -> None:
    committed = git("show", "-s", "--format=%cI", commit, cwd=target).stdout.strip()
    _write(record, "commit", commit)
    _write(record, "commit-time", committed)
    when, due = moment(committed), moment(deadline)
    if late is not None and when and due:
        _write(record, "days-late", str(late.days_late(when - due)))


def _also_on_time(git: Git, target: Path, record: Path, commit: str, deadline: str, late: Late) -> str:
    """The last on-time commit in a work tree beside `target` (its files only: its .git link removed), recorded
    beside `record`; grade-all grades it as a submission of its own."""
    tree, on_time = beside(target), beside(record)
    added = git("worktree", "add", "--quiet", "--detach", str(tree.absolute()), commit, cwd=target)
    if added.returncode:
        return f"could not check out the last on-time commit {commit}: {said(added.stderr)}"
    (tree / ".git").unlink(missing_ok=True)
    on_time.mkdir(parents=True, exist_ok=True)
    for name in ("student", "deadline"):
        shutil.copyfile(record / name, on_time / name)
    _record(git, target, on_time, commit, deadline, late)
    return ""


def _remove(folder: Path) -> None:
    """A submission that is not graded leaves no folder behind: grade-all grades every folder. (Not
    shutil.rmtree, which recurses: the student's tree may be 1,100 folders deep.)"""
    remove_tree(folder)


def checkout_shard(
    shard: Path,
    server: str,
    submissions: Path,
    results: Path,
    late: Late | None = None,
    seconds: float = CLONE_TIMEOUT,
) -> int:
    students = json.loads(shard.read_text(encoding="utf-8"))
    submissions.mkdir(parents=True, exist_ok=True)
    for student in students:
        error = checkout(student["repository"], student["deadline"], server, submissions, results, late, seconds)
        print(f"{student['repository']}: {error or 'checked out at ' + _commit_line(results, student)}", flush=True)
    return 0


def _commit_line(results: Path, student: dict) -> str:
    record = results / artifact_id(student["repository"])
    line = f"{(record / 'commit').read_text().strip()[:12]} ({(record / 'commit-time').read_text().strip()})"
    late = f", {days(int((record / 'days-late').read_text()))} late" if (record / "days-late").is_file() else ""
    on_time = beside(record) / "commit"
    return (
        line + late + (f", and its last on-time commit {on_time.read_text().strip()[:12]}" if on_time.is_file() else "")
    )


def students(results: Path) -> list[Path]:
    return sorted(folder for folder in results.iterdir() if folder.is_dir())


def nest_on_time(results: Path) -> None:
    """Each on-time grading (RESULTS/<id>@on-time) into its student's folder, as RESULTS/<id>/on-time."""
    for folder in students(results):
        student = folder.with_name(folder.name.removesuffix(ALSO_ON_TIME))
        if folder.name.endswith(ALSO_ON_TIME) and student.is_dir():
            folder.rename(student / gradebook.ON_TIME)


CUT = "no results: the shard's grading ended before this student was graded; re-run them"


def finish(results: Path, rubric: Rubric | None = None, now: datetime | None = None) -> int:
    nest_on_time(results)
    stamp = (now or datetime.now(UTC)).isoformat(timespec="seconds")
    for folder in students(results):
        for grading in (folder, folder / gradebook.ON_TIME):
            if grading.is_dir():
                _write(grading, "graded-at", stamp)
                mark_cut(grading)
    overview, summary = results / "overview.md", os.environ.get("GITHUB_STEP_SUMMARY")
    if summary and overview.is_file():  # the shard's own table (with its on-time gradings in place), on its job's page
        entries = gradebook.collect(results, rubric or load())
        with open(summary, "a", encoding="utf-8") as page:
            page.write(gradebook.overview(entries, rubric or load()))
    for path in results.iterdir():  # the shard's gradebook and report: the gradebook job writes the roster's
        if path.is_file():
            path.unlink()
    return 0


def mark_cut(grading: Path) -> None:
    """A student checked out whose grading left no results.json (grade-all itself was stopped): the reason
    recorded, so that the merge and the gradebook name them."""
    if not (grading / "results.json").exists() and not (grading / "error").exists():
        _write(grading, "error", CUT)


class Failed(NamedTuple):
    """A student whose grading failed, and why."""

    repository: str
    reason: str


def failures(results: Path, rubric: Rubric) -> list[Failed]:
    """Every student whose grading failed; not those with no commit to grade."""
    found = []
    for folder in students(results):
        entry = gradebook.read_entry(folder, rubric)
        if entry.error and not entry.error.startswith(NOTHING_TO_GRADE):
            found.append(Failed(entry.student, entry.error))
    return found


def check(results: Path, rubric: Rubric) -> int:
    failed = failures(results, rubric)
    for one in failed:
        print(workflow_command("error", one.reason, title=f"grading failed for {one.repository}"))
    if failed:
        names = " ".join(one.repository for one in failed)
        run = os.environ.get("GITHUB_RUN_ID", "THIS_RUN_ID")
        print(f"Re-run them alone: the workflow's inputs students='{names}' and previous_run={run}")
    return 1 if failed else 0


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m autograder.roster.shard_job", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    clone = commands.add_parser("checkout", help="clone the shard's students at their deadlines")
    clone.add_argument("shard", type=Path, help="JSON: [{repository, deadline}, ...]")
    clone.add_argument("--submissions", type=Path, required=True)
    clone.add_argument("--results", type=Path, required=True)
    clone.add_argument("--server", default=os.environ.get("GITHUB_SERVER_URL", "https://github.com"))
    clone.add_argument(
        "--clone-timeout", type=float, default=CLONE_TIMEOUT, help="seconds for each student's clone and checkout"
    )
    places = [clone]
    for name in ("finish", "check"):
        places.append(commands.add_parser(name))
        places[-1].add_argument("results", type=Path)
    for place in places:
        place.add_argument(
            "--rubric", type=Path, metavar="FILE", help="the rubric graded by (default: the grader's own)"
        )
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = _arguments(argv)
    try:
        rubric = load(args.rubric)
    except RubricError as error:
        print(f"shard: {error}", file=sys.stderr)
        return 2
    if args.command == "checkout":
        return checkout_shard(args.shard, args.server, args.submissions, args.results, rubric.late, args.clone_timeout)
    return finish(args.results, rubric) if args.command == "finish" else check(args.results, rubric)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

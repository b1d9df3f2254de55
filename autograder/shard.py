"""What a shard job of the roster workflow does around `autograde grade-all`.

    python -m autograder.shard checkout SHARD_JSON --submissions DIR --results DIR
    python -m autograder.shard finish RESULTS_DIR
    python -m autograder.shard check RESULTS_DIR

`checkout` clones each student of the shard (a JSON list of {repository, deadline}, from the
workflow's matrix) into SUBMISSIONS/<owner__name>, at the last commit before the student's
deadline, and records in RESULTS/<owner__name>/ the repository (`student`), the deadline applied
(`deadline`), the commit (`commit`) and its committer time (`commit-time`), or why there is nothing
to grade (`error`). Clones carry no credentials, so only public repositories can be read. Each
student's clone and checkout together get CLONE_TIMEOUT seconds: one that fails, hangs or times
out is recorded for that student (git and everything it started killed), and the others go on.
What git says about a student's repository (their file names) is written on one escaped line.
`finish` stamps every grading with the time it was made (`graded-at`: the merge keeps each
student's newest), shows the shard's overview on its job's page and drops grade-all's gradebook
and report of the shard (the gradebook job writes the roster's), so that the shard's artifact holds
only the students' folders. `check` exits 1 naming every student whose grading failed, so the job
shows red and can be re-run. Standard library only.
"""

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from autograder import gradebook, rubric
from autograder.roster_matrix import artifact_id
from autograder.submission import remove_tree
from autograder.text import escaped, workflow_command

NO_COMMIT = "no commit before the deadline"
CLONE_TIMEOUT = 300.0  # seconds for one student's clone and checkout together
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
    repository: str, deadline: str, server: str, submissions: Path, results: Path, seconds: float = CLONE_TIMEOUT
) -> str:
    """Clone one student at their deadline; return '' or the reason there is nothing to grade."""
    target, record = submissions / artifact_id(repository), results / artifact_id(repository)
    record.mkdir(parents=True, exist_ok=True)
    _write(record, "student", repository)
    _write(record, "deadline", deadline)
    url = f"{server.rstrip('/')}/{repository}"
    try:
        error = _clone(Git(seconds), url, target, deadline, record)
    except GitTimeout as late:
        error = f"could not clone {url}: {late}"
    except (OSError, ValueError) as problem:  # git missing, a folder that cannot be written: this student only
        error = f"could not clone {url}: {type(problem).__name__}: {said(str(problem))}"
    if error:
        _write(record, "error", error)
        _remove(target)
    return error


def _clone(git: Git, url: str, target: Path, deadline: str, record: Path) -> str:
    cloned = git("clone", "--quiet", "--no-checkout", "--filter=blob:none", url, str(target))
    if cloned.returncode != 0:
        lines = cloned.stderr.strip().splitlines() or ["git clone failed"]
        why = next((line for line in lines if line.startswith("fatal:")), lines[-1])
        return f"could not clone {url} (is it public? this job has no credentials): {said(why)}"
    commit = git("rev-list", "-1", f"--before={deadline}", "HEAD", cwd=target).stdout.strip()
    if not commit:
        return f"{NO_COMMIT} {deadline}"
    _write(record, "commit", commit)
    _write(record, "commit-time", git("show", "-s", "--format=%cI", commit, cwd=target).stdout.strip())
    moved = git("checkout", "--quiet", commit, cwd=target)
    return f"could not check out {commit}: {said(moved.stderr)}" if moved.returncode else ""


def _remove(folder: Path) -> None:
    """A submission that is not graded leaves no folder behind: grade-all grades every folder. (Not
    shutil.rmtree, which recurses: the student's tree may be 1,100 folders deep.)"""
    remove_tree(folder)


def checkout_shard(shard: Path, server: str, submissions: Path, results: Path, seconds: float = CLONE_TIMEOUT) -> int:
    students = json.loads(shard.read_text(encoding="utf-8"))
    submissions.mkdir(parents=True, exist_ok=True)
    for student in students:
        error = checkout(student["repository"], student["deadline"], server, submissions, results, seconds)
        print(f"{student['repository']}: {error or 'checked out at ' + _commit_line(results, student)}", flush=True)
    return 0


def _commit_line(results: Path, student: dict) -> str:
    record = results / artifact_id(student["repository"])
    return f"{(record / 'commit').read_text().strip()[:12]} ({(record / 'commit-time').read_text().strip()})"


def students(results: Path) -> list[Path]:
    return sorted(folder for folder in results.iterdir() if folder.is_dir())


def finish(results: Path, now: datetime | None = None) -> int:
    stamp = (now or datetime.now(UTC)).isoformat(timespec="seconds")
    for folder in students(results):
        _write(folder, "graded-at", stamp)
    overview, summary = results / "overview.md", os.environ.get("GITHUB_STEP_SUMMARY")
    if summary and overview.is_file():  # the shard's own table, on its job's page
        with open(summary, "a", encoding="utf-8") as page:
            page.write(overview.read_text(encoding="utf-8"))
    for path in results.iterdir():  # the shard's gradebook and report: the gradebook job writes the roster's
        if path.is_file():
            path.unlink()
    return 0


def failures(results: Path) -> list[tuple[str, str]]:
    """(repository, reason) of every student whose grading failed; not those with no commit to grade."""
    found = []
    items = rubric.load()
    for folder in students(results):
        entry = gradebook.read_entry(folder, items)
        if entry.error and not entry.error.startswith(NO_COMMIT):
            found.append((entry.student, entry.error))
    return found


def check(results: Path) -> int:
    failed = failures(results)
    for student, reason in failed:
        print(workflow_command("error", reason, title=f"grading failed for {student}"))
    if failed:
        names = " ".join(student for student, _ in failed)
        run = os.environ.get("GITHUB_RUN_ID", "THIS_RUN_ID")
        print(f"Re-run them alone: the workflow's inputs students='{names}' and previous_run={run}")
    return 1 if failed else 0


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m autograder.shard", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    clone = commands.add_parser("checkout", help="clone the shard's students at their deadlines")
    clone.add_argument("shard", type=Path, help="JSON: [{repository, deadline}, ...]")
    clone.add_argument("--submissions", type=Path, required=True)
    clone.add_argument("--results", type=Path, required=True)
    clone.add_argument("--server", default=os.environ.get("GITHUB_SERVER_URL", "https://github.com"))
    clone.add_argument(
        "--clone-timeout", type=float, default=CLONE_TIMEOUT, help="seconds for each student's clone and checkout"
    )
    for name in ("finish", "check"):
        commands.add_parser(name).add_argument("results", type=Path)
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = _arguments(argv)
    if args.command == "checkout":
        return checkout_shard(args.shard, args.server, args.submissions, args.results, args.clone_timeout)
    return finish(args.results) if args.command == "finish" else check(args.results)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

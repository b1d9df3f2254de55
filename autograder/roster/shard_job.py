"""What a shard job of the roster workflow does around `autograde grade-all`.

    python -m autograder.roster.shard_job checkout SHARD_JSON --submissions DIR --results DIR
    python -m autograder.roster.shard_job finish RESULTS_DIR
    python -m autograder.roster.shard_job check RESULTS_DIR

`checkout` clones each student of the shard (a JSON list of {repository, deadline}, from the
workflow's matrix) into SUBMISSIONS/<owner__name>, at the last commit before the student's
deadline, and records in RESULTS/<owner__name>/ the repository (`student`), the deadline applied
(`deadline`), the commit (`commit`) and its committer time (`commit-time`), or why there is nothing
to grade (`error`). Clones carry no credentials, so only public repositories can be read.
`finish` stamps every grading with the time it was made (`graded-at`: the merge keeps each
student's newest), shows the shard's overview on its job's page and drops grade-all's gradebook
and report of the shard (the gradebook job writes the roster's), so that the shard's artifact holds
only the students' folders. `check` exits 1 naming every student whose grading failed, so the job
shows red and can be re-run. Standard library only.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from autograder.roster import gradebook
from autograder.roster.shards import artifact_id
from autograder.rubric import Rubric, load

NO_COMMIT = "no commit before the deadline"
GIT_TIMEOUT = 600  # seconds for one clone


def _git(*arguments: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": ""}
    command = ["git", "-c", "credential.helper=", "-c", "advice.detachedHead=false", *arguments]
    return subprocess.run(
        command, cwd=cwd, env=environment, capture_output=True, text=True, timeout=GIT_TIMEOUT, check=False
    )


def _write(folder: Path, name: str, text: str) -> None:
    (folder / name).write_text(text + "\n", encoding="utf-8")


def checkout(repository: str, deadline: str, server: str, submissions: Path, results: Path) -> str:
    """Clone one student at their deadline; return '' or the reason there is nothing to grade."""
    target, record = submissions / artifact_id(repository), results / artifact_id(repository)
    record.mkdir(parents=True, exist_ok=True)
    _write(record, "student", repository)
    _write(record, "deadline", deadline)
    url = f"{server.rstrip('/')}/{repository}"
    cloned = _git("clone", "--quiet", "--no-checkout", "--filter=blob:none", url, str(target))
    if cloned.returncode != 0:
        lines = cloned.stderr.strip().splitlines() or ["git clone failed"]
        why = next((line for line in lines if line.startswith("fatal:")), lines[-1])
        error = f"could not clone {url} (is it public? this job has no credentials): {why}"
    else:
        commit = _git("rev-list", "-1", f"--before={deadline}", "HEAD", cwd=target).stdout.strip()
        error = f"{NO_COMMIT} {deadline}" if not commit else ""
        if commit:
            moved = _git("checkout", "--quiet", commit, cwd=target)
            error = f"could not check out {commit}: {moved.stderr.strip()}" if moved.returncode else ""
            _write(record, "commit", commit)
            _write(record, "commit-time", _git("show", "-s", "--format=%cI", commit, cwd=target).stdout.strip())
    if error:
        _write(record, "error", error)
        _remove(target)
    return error


def _remove(folder: Path) -> None:
    """A submission that is not graded leaves no folder behind: grade-all grades every folder."""
    shutil.rmtree(folder, ignore_errors=True)


def checkout_shard(shard: Path, server: str, submissions: Path, results: Path) -> int:
    students = json.loads(shard.read_text(encoding="utf-8"))
    submissions.mkdir(parents=True, exist_ok=True)
    for student in students:
        error = checkout(student["repository"], student["deadline"], server, submissions, results)
        print(f"{student['repository']}: {error or 'checked out at ' + _commit_line(results, student)}")
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


class Failed(NamedTuple):
    """A student whose grading failed, and why."""

    repository: str
    reason: str


def failures(results: Path, rubric: Rubric) -> list[Failed]:
    """Every student whose grading failed; not those with no commit to grade."""
    found = []
    for folder in students(results):
        entry = gradebook.read_entry(folder, rubric)
        if entry.error and not entry.error.startswith(NO_COMMIT):
            found.append(Failed(entry.student, entry.error))
    return found


def check(results: Path, rubric: Rubric) -> int:
    failed = failures(results, rubric)
    for one in failed:
        print(f"::error title=grading failed for {one.repository}::{one.reason}")
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
    for name in ("finish", "check"):
        commands.add_parser(name).add_argument("results", type=Path)
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = _arguments(argv)
    if args.command == "checkout":
        return checkout_shard(args.shard, args.server, args.submissions, args.results)
    return finish(args.results) if args.command == "finish" else check(args.results, load())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

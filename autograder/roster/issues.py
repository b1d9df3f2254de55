"""Each student's feedback as one issue in their own repository, through the GitHub CLI (`gh`).

    GH_TOKEN=... python -m autograder.roster.issues RESULTS_DIR --roster ROSTER [--rubric FILE]

For every roster repository with a grading in RESULTS_DIR/<owner__name>/, the issue titled ISSUE_TITLE
in that repository (open or closed) gets the student's `summary.md` (the score table and what to
fix), with the commit graded and the deadline applied (and, with the rubric's [late], the late
penalty taken and why, first: the summary shows the score before it): opened when there is none, edited when its
text changed, left alone otherwise, so running it again posts nothing twice. The repositories come
from the roster, never from the gradings' folders. A student without a valid grading (no commit
before the deadline, a grading that failed) gets nothing and is listed. Writes are paced under
GitHub's limits on content creation (80 a minute, 500 an hour) and retried when GitHub asks to slow
down. It reads the gradings as text and never runs a student's code. Standard library only.
"""

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import NamedTuple

from autograder import TITLE
from autograder.roster import gradebook, shards
from autograder.rubric import Late, Rubric, RubricError, days, late_policy, load
from autograder.text import escaped, workflow_command

ISSUE_TITLE = f"{TITLE}: your grade and feedback"
MARKER = "<!-- autograde feedback -->"
MAX_BODY = 60_000  # GitHub refuses an issue body over 65,536 characters
SLOW_DOWN = ("rate limit", "submitted too quickly", "HTTP 429", "abuse detection")
REFUSED = ("HTTP 401", "Bad credentials", "gh auth login")  # the token itself: every repository would fail


class TokenRefused(RuntimeError):
    """GitHub refused the token: stop rather than fail every repository the same way."""


class Action(StrEnum):
    """What was done in one student's repository, in the order the tally lists them."""

    OPENED = "opened"
    UPDATED = "updated"
    UNCHANGED = "unchanged"  # the issue already says it
    SKIPPED = "skipped"  # no valid grading: nothing to post
    FAILED = "failed"  # GitHub refused: `detail` says what to do


@dataclass
class Posted:
    repository: str
    action: Action
    detail: str = ""


class Pacer:
    """Spaces writes: at most `per_minute` in any minute and `per_hour` in any hour."""

    def __init__(
        self,
        per_minute: int = 60,
        per_hour: int = 450,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.limits = ((60.0, per_minute), (3600.0, per_hour))
        self.clock, self.sleep = clock, sleep
        self.times: deque[float] = deque()

    def wait(self) -> None:
        """Return when one more write keeps within both limits; count it."""
        for span, limit in self.limits:
            now = self.clock()
            recent = [moment for moment in self.times if moment > now - span]
            if len(recent) >= limit:
                self.sleep(recent[-limit] + span - now)
        now = self.clock()
        self.times.append(now)
        while self.times and self.times[0] <= now - 3600.0:
            self.times.popleft()


class GitHub:
    """`gh` calls with retries when GitHub asks to slow down; writes go through the pacer."""

    def __init__(self, pacer: Pacer, retries: int = 5, retry_wait: float = 60.0) -> None:
        self.pacer, self.retries, self.retry_wait = pacer, retries, retry_wait

    def run(self, arguments: list[str], text: str | None = None, write: bool = False) -> str:
        attempt = 0
        while True:
            if write:
                self.pacer.wait()
            done = subprocess.run(["gh", *arguments], input=text, capture_output=True, text=True, timeout=300)
            if done.returncode == 0:
                return done.stdout
            message = done.stderr.strip() or f"gh exited with status {done.returncode}"
            if any(sign in message for sign in REFUSED):
                raise TokenRefused(message)
            if attempt == self.retries or not any(sign.lower() in message.lower() for sign in SLOW_DOWN):
                raise RuntimeError(message)
            self.pacer.sleep(self.retry_wait * 2**attempt)
            attempt += 1


def shortened(summary: str) -> str:
    """The summary within GitHub's limit, cut after a whole item."""
    if len(summary) <= MAX_BODY:
        return summary
    end = summary.rfind("\n</details>\n", 0, MAX_BODY)
    cut = end + len("\n</details>\n") if end >= 0 else MAX_BODY
    return summary[:cut] + "\n*(Shortened: GitHub limits the length of an issue.)*\n"


def issue_text(folder: Path, entry: gradebook.Entry, late: Late | None = None) -> str:
    """The issue's body: the late penalty when there is one, summary.md, then which commit was graded
    against which deadline."""
    summary = shortened((folder / "summary.md").read_text(encoding="utf-8").rstrip() + "\n")
    graded = f"Graded: commit `{entry.commit[:12]}`" if entry.commit else "Graded"
    when = f" of {entry.commit_time}" if entry.commit_time else ""
    last = f"the last within {days(late.max_days)} of" if late and entry.days_late else "the last before"
    deadline = f", {last} your deadline, {entry.deadline}" if entry.deadline else ""
    note = "This issue is updated when your work is graded again."
    return f"{_late_work(entry, late)}{summary}\n---\n{graded}{when}{deadline}. {note}\n\n{MARKER}\n"


def _late_work(entry: gradebook.Entry, late: Late | None) -> str:
    """The grade after the late-work policy, what it did and why, before the summary; '' when it did nothing."""
    applied = gradebook.late_note(entry, late)
    if not applied or late is None:
        return ""
    grade = f"**Your grade: {entry.total:g} / {entry.max_score:g}**, after the course's late-work policy"
    return f"{grade} ({late_policy(late)}). {applied}\n\n"


class Issue(NamedTuple):
    number: int
    body: str


def existing_issue(github: GitHub, repository: str) -> Issue | None:
    """The repository's feedback issue: the exact title, ours first, oldest first."""
    listed = github.run(
        ["issue", "list", "--repo", repository, "--state", "all", "--limit", "1000", "--json", "number,title,body"]
    )
    issues = [issue for issue in json.loads(listed or "[]") if issue.get("title") == ISSUE_TITLE]
    issues.sort(key=lambda issue: (MARKER not in (issue.get("body") or ""), issue["number"]))
    return Issue(issues[0]["number"], issues[0].get("body") or "") if issues else None


def post(github: GitHub, repository: str, text: str) -> Posted:
    """Open the student's feedback issue, or edit it when its text changed."""
    found = existing_issue(github, repository)
    if found is None:
        url = github.run(
            ["issue", "create", "--repo", repository, "--title", ISSUE_TITLE, "--body-file", "-"], text, write=True
        )
        return Posted(repository, Action.OPENED, url.strip())
    if found.body.strip() == text.strip():
        return Posted(repository, Action.UNCHANGED, f"#{found.number}")
    github.run(["issue", "edit", str(found.number), "--repo", repository, "--body-file", "-"], text, write=True)
    return Posted(repository, Action.UPDATED, f"#{found.number}")


def explain(repository: str, message: str) -> str:
    """What to do about a failed post, in the instructor's terms."""
    last = message.strip().splitlines()[-1] if message.strip() else "gh failed"
    if "disabled issues" in message:
        return f"issues are turned off in {repository}: turn them on (Settings, Features, Issues), then run again"
    if "Could not resolve to a Repository" in message or "HTTP 404" in message:
        return f"the token cannot see {repository}: give FEEDBACK_TOKEN access to it ({last})"
    if "not accessible" in message or "HTTP 403" in message:
        return f"the token may not write issues in {repository}: it needs Issues: read and write ({last})"
    return last


def post_all(
    results: Path, roster: list[str], github: GitHub, rubric: Rubric, say: Callable[[str], None] = print
) -> list[Posted]:
    """Post every roster student graded in `results` (against `rubric`), in roster order."""
    posted = []
    for repository in roster:
        folder = results / shards.artifact_id(repository)
        if not folder.is_dir():
            continue  # not graded in this run
        entry = gradebook.read_entry(folder, rubric)
        kept = entry.folder or folder  # with [late] keep = "better", the grading that counts
        if entry.error or not (kept / "summary.md").is_file():
            outcome = Posted(repository, Action.SKIPPED, f"no valid grading: {entry.error or 'no summary.md'}")
        else:
            try:
                outcome = post(github, repository, issue_text(kept, entry, rubric.late))
            except TokenRefused:
                raise
            except RuntimeError as error:
                outcome = Posted(repository, Action.FAILED, explain(repository, str(error)))
        posted.append(outcome)
        say(f"{repository}: {outcome.action} {escaped(outcome.detail)}".rstrip())  # a grading's error, on one line
    return posted


def tally(posted: list[Posted]) -> str:
    return ", ".join(f"{sum(p.action == action for p in posted)} {action}" for action in Action)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.roster.issues", description=__doc__.split("\n")[0])
    parser.add_argument("results", type=Path, help="one folder per student (owner__name), as the shards upload them")
    parser.add_argument("--roster", type=Path, required=True, help="the roster: whom to post to")
    parser.add_argument("--retry-wait", type=float, default=60.0, help="seconds before the first retry (doubling)")
    parser.add_argument("--per-minute", type=int, default=60, help="writes per minute at most (GitHub: 80)")
    parser.add_argument("--per-hour", type=int, default=450, help="writes per hour at most (GitHub: 500)")
    parser.add_argument("--rubric", type=Path, metavar="FILE", help="the rubric graded by (default: the grader's own)")
    args = parser.parse_args(argv)
    if shutil.which("gh") is None:
        print("feedback: gh (the GitHub CLI) is not on PATH", file=sys.stderr)
        return 2
    try:
        roster, rubric = shards.repositories(args.roster), load(args.rubric)
    except (OSError, shards.RosterError, RubricError) as error:
        print(f"feedback: {error}", file=sys.stderr)
        return 2
    github = GitHub(Pacer(args.per_minute, args.per_hour), retry_wait=args.retry_wait)
    try:
        posted = post_all(args.results, roster, github, rubric) if args.results.is_dir() else []
    except TokenRefused as error:
        print(f"feedback: GitHub refused the token (is FEEDBACK_TOKEN set and current?): {error}", file=sys.stderr)
        return 2
    print(f"feedback: {tally(posted)}")
    failed = [p for p in posted if p.action == Action.FAILED]
    for problem in failed:
        print(workflow_command("error", problem.detail, title=f"no feedback for {problem.repository}"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

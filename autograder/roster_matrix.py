"""A roster file of student repositories, read into the roster-grading workflow's matrix.

    python -m autograder.roster_matrix ROSTER DEADLINE   # prints matrix=... and deadline=... for $GITHUB_OUTPUT

One repository per line, as `owner/name` or its GitHub URL; blank lines and `#` comments are
skipped. Standard library only: the workflow's first job runs it without installing anything.
"""

import json
import re
import sys
from datetime import UTC, datetime
from pathlib import Path

REPOSITORY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$")
URL = re.compile(r"^(?:https://github\.com/|git@github\.com:)(.+?)(?:\.git)?/?$")


class RosterError(ValueError):
    """A roster line or deadline that cannot be used."""


def parse(text: str) -> list[str]:
    """The repositories of a roster, in order, each once."""
    repositories: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = URL.match(line)
        name = match[1] if match else line
        if not REPOSITORY.match(name) or name.split("/")[1] in (".", ".."):
            raise RosterError(f"roster line {number}: {raw.strip()!r} is not a repository (owner/name)")
        if name not in repositories:
            repositories.append(name)
    if not repositories:
        raise RosterError("the roster names no repository")
    return repositories


def read(path: Path) -> list[str]:
    return parse(path.read_text(encoding="utf-8"))


def artifact_id(repository: str) -> str:
    """A name an artifact may carry: 'org/alice-week07' -> 'org__alice-week07'."""
    return repository.replace("/", "__")


def matrix(repositories: list[str]) -> dict:
    return {"include": [{"repository": name, "id": artifact_id(name)} for name in repositories]}


def deadline(text: str) -> str:
    """An ISO 8601 timestamp, normalised with its offset (UTC when none is given)."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError as error:
        raise RosterError(f"deadline {text!r} is not an ISO timestamp such as 2026-12-04T23:59:00+01:00") from error
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.isoformat()


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python -m autograder.roster_matrix ROSTER DEADLINE", file=sys.stderr)
        return 2
    try:
        repositories, when = read(Path(argv[1])), deadline(argv[2])
    except (OSError, RosterError) as error:
        print(f"roster: {error}", file=sys.stderr)
        return 2
    print(f"matrix={json.dumps(matrix(repositories), separators=(',', ':'))}")
    print(f"deadline={when}")
    print(f"{len(repositories)} repositories, deadline {when}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

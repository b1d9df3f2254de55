"""A roster of student repositories, split into the shards of the roster-grading workflow.

    python -m autograder.roster.shards ROSTER DEADLINE [--shard-size N] [--students NAMES] [--shards NUMBERS]

prints `matrix=...`, `deadline=...` and `shards=...` for $GITHUB_OUTPUT, and the shards on stderr.

One repository per line, as `owner/name` or its GitHub URL, optionally followed by that student's
own deadline, which replaces the run's for them (an extension):

    org/alice-week07
    org/bob-week07  2026-12-06T23:59:00+01:00

Blank lines and `#` comments are skipped. The commands that read a roster's gradings (`autograde gradebook`,
`report` and `merge --roster`) also take a local roster's students by their folder names (`alice`, as
`grade-all` names a student after their fork's folder), and refuse a line that names no folder where a
folder no line names is close to it (`names`, `check_names`): a typo, never a student counted twice.

A shard is one matrix job: it sets up once and grades its
students with `autograde grade-all`. GitHub runs at most 256 jobs from one matrix, so a roster
longer than 256 shards' worth gets larger shards. `--students` and `--shards` re-run a part of the
roster: the shards keep their numbers and hold only the students asked for. Standard library
only: the workflow's first job runs it without installing anything.
"""

import argparse
import difflib
import json
import math
import re
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from autograder.text import escaped

REPOSITORY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$")
URL = re.compile(r"^(?:https://github\.com/|git@github\.com:)(.+?)(?:\.git)?/?$")
FOLDER = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$")  # a local roster's student: their fork's folder
NOTHING_UPLOADED = "no results: the grading job uploaded nothing (its shard failed or was cancelled)"
NOT_GRADED = "no results: no folder of gradings has this name (not graded)"
MAX_SHARDS = 256  # GitHub's limit on the jobs of one matrix
# Students per shard by default: several per core of a GitHub-hosted runner (2 or 4 cores), so
# one set-up (about a minute: Python, CPU torch, the grader) serves minutes of grading.
SHARD_SIZE = 30


class RosterError(ValueError):
    """A roster line, deadline or selection that cannot be used."""


@dataclass(frozen=True)
class Student:
    repository: str  # owner/name; in a local roster, the student's folder name
    deadline: str | None = None  # the roster line's own deadline, normalised; None: the run's

    @property
    def id(self) -> str:
        return artifact_id(self.repository)


@dataclass(frozen=True)
class Shard:
    number: int  # 1-based, in roster order; stable for a roster and a shard size
    students: tuple[Student, ...]


def artifact_id(repository: str) -> str:
    """A name an artifact or a folder may carry: 'org/alice-week07' -> 'org__alice-week07'."""
    return repository.replace("/", "__")


def repository(text: str) -> str:
    """`owner/name` from `owner/name` or a GitHub URL; RosterError when it is neither."""
    match = URL.match(text)
    name = match[1] if match else text
    if not REPOSITORY.match(name) or name.split("/")[1] in (".", ".."):
        raise RosterError(f"{text!r} is not a repository (owner/name)")
    return name


def roster_name(text: str, folders: bool) -> str:
    """`owner/name` from a repository or its URL; with `folders`, also a local roster's folder name (`alice`)."""
    if "/" in text:
        return repository(text)
    if not FOLDER.match(text):
        raise RosterError(f"{text!r} is not a repository (owner/name)" + " or a folder's name" * folders)
    if not folders:
        raise RosterError(
            f"{text!r} is a folder's name, not a repository (owner/name): the roster workflow and its feedback "
            "issues need GitHub repositories (a local roster's folder names are for gradebook, report and merge)"
        )
    return text


def deadline(text: str) -> str:
    """An ISO 8601 timestamp, normalised with its offset (UTC when none is given)."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError as error:
        raise RosterError(f"deadline {text!r} is not an ISO timestamp such as 2026-12-04T23:59:00+01:00") from error
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.isoformat()


def _line(raw: str, folders: bool) -> Student | None:
    words = raw.split("#", 1)[0].split()
    if not words:
        return None
    if len(words) > 2:
        raise RosterError(f"{raw.strip()!r} has {len(words)} fields: give a repository and, optionally, a deadline")
    return Student(roster_name(words[0], folders), deadline(words[1]) if len(words) == 2 else None)


def parse(text: str, folders: bool = False) -> list[Student]:
    """The students of a roster, in order, each once (GitHub names ignore case); with `folders`, a line may
    also be a local roster's folder name."""
    students: dict[str, tuple[int, Student]] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        try:
            student = _line(raw, folders)
        except RosterError as error:
            raise RosterError(f"roster line {number}: {error}") from None
        if student is None:
            continue
        key = student.repository.lower() if "/" in student.repository else student.repository
        if key in students and students[key][1].deadline != student.deadline:
            first = students[key][0]
            raise RosterError(f"roster line {number}: {student.repository} is on line {first} with another deadline")
        students.setdefault(key, (number, student))
    if not students:
        raise RosterError(f"the roster names no {'student' if folders else 'repository'}")
    return [student for _, student in students.values()]


def read(path: Path, folders: bool = False) -> list[Student]:
    return parse(path.read_text(encoding="utf-8"), folders)


def repositories(path: Path) -> list[str]:
    """The roster's repositories (owner/name), in order."""
    return [student.repository for student in read(path)]


def names(path: Path) -> list[str]:
    """The roster's students as their gradings are named: repositories (owner/name) or folder names, in order."""
    return [student.repository for student in read(path, folders=True)]


def no_folder(name: str) -> str:
    """Why a roster's student whose gradings hold no folder has no grade: a shard of the roster workflow that
    uploaded nothing (a repository), or a local roster's student not graded (a folder name)."""
    return NOTHING_UPLOADED if "/" in name else NOT_GRADED


def _own_name(label: str) -> str:
    """A repository's name without its owner ('course/dana', 'course__dana': 'dana'); a folder's name as it is."""
    return re.split(r"/|__", label)[-1]


def _affixes(lines: list[str]) -> tuple[str, str]:
    """What begins and ends every line's name ('week07-' of GitHub Classroom's 'week07-alice', 'week07-bob'):
    left out when names are compared, so that it makes no two students look alike."""
    names = [_own_name(line) for line in lines]
    if len(names) < 2:
        return "", ""
    return _shared_start(names), _shared_start([name[::-1] for name in names])[::-1]


def _shared_start(texts: list[str]) -> str:
    """The longest start every text shares (the first and the last in sorted order share the least)."""
    first, last = min(texts), max(texts)
    differs = (at for at, (a, b) in enumerate(zip(first, last, strict=False)) if a != b)
    return first[: next(differs, min(len(first), len(last)))]


def _key(label: str, affixes: tuple[str, str]) -> str:
    name, (prefix, suffix) = _own_name(label), affixes
    if len(name) >= len(prefix) + len(suffix):
        name = name.removeprefix(prefix).removesuffix(suffix)
    return name


def closest(line: str, labels: list[str], lines: list[str]) -> list[str]:
    """The labels (folder names, or the students they record) closest to a roster line by edit distance, best
    first: its name is compared without its owner and without what every line of the roster shares."""
    affixes, keys = _affixes(lines), {}
    for label in labels:
        keys.setdefault(_key(label, affixes), label)
    found = difflib.get_close_matches(_key(line, affixes), [key for key in keys if key], n=3, cutoff=0.6)
    return [keys[key] for key in found]


def without_folder(lines: list[str], folders: dict[str, str]) -> list[str]:
    """The roster's students that no folder of gradings holds. `folders` maps each folder's name to the student
    it records (its own name when it records none); a line names a folder by either, `owner/name` by owner__name."""
    known = set(folders) | set(folders.values())
    return [line for line in lines if line not in known and artifact_id(line) not in known]


def check_names(roster: Path, lines: list[str], folders: dict[str, str], where: str) -> None:
    """Refuse a roster file that misnames the folders of gradings in `where` (RosterError): a line that names
    no folder while a folder no line names is close to it, by edit distance (a typo, or a roster of
    repositories against a local roster's folders); listing both would count that student twice. A line
    with no folder and nothing close is a student without a grading (a roster workflow's shard that
    uploaded nothing, a student not graded): listed as such."""
    named = set(lines) | {artifact_id(line) for line in lines}
    unnamed = [student for folder, student in folders.items() if folder not in named and student not in named]
    for line in without_folder(lines, folders):
        close = closest(line, unnamed, lines)
        if close:
            guesses = " or ".join(map(escaped, close))
            raise RosterError(
                f"{roster}: {line} names no folder of {escaped(where)}: did you mean {guesses}? "
                "(a line is a student's folder name, as grade-all names it, or their repository, owner/name)"
            )


def shards(students: list[Student], size: int = SHARD_SIZE) -> list[Shard]:
    """Consecutive shards of about `size` students (their sizes differ by one at most), at most 256."""
    if size < 1:
        raise RosterError(f"a shard holds at least one student (shard size {size})")
    count = min(MAX_SHARDS, math.ceil(len(students) / size))
    small, extra = divmod(len(students), count)
    found, start = [], 0
    for number in range(1, count + 1):
        end = start + small + (number <= extra)
        found.append(Shard(number, tuple(students[start:end])))
        start = end
    return found


def _words(text: str) -> list[str]:
    return [word for word in re.split(r"[\s,]+", text) if word]


def _numbers(text: str, count: int) -> set[int]:
    """'3 7 10-12' -> {3, 7, 10, 11, 12}, each a shard of the roster."""
    numbers: set[int] = set()
    for word in _words(text):
        match = re.fullmatch(r"(\d+)(?:-(\d+))?", word)
        if not match:
            raise RosterError(f"shard {word!r} is not a number or a range such as 3-5")
        first, last = int(match[1]), int(match[2] or match[1])
        if not 1 <= first <= last <= count:
            raise RosterError(f"shard {word}: the roster has shards 1 to {count}")
        numbers.update(range(first, last + 1))
    return numbers


def select(all_shards: list[Shard], students: str = "", numbers: str = "") -> list[Shard]:
    """The shards to run: every one when nothing is named, else the named shards whole and, in
    their own shards, the named students (`owner/name` or URLs, separated by spaces or commas)."""
    if not students.strip() and not numbers.strip():
        return all_shards
    chosen = _numbers(numbers, len(all_shards))
    try:
        named = {repository(word).lower() for word in _words(students)}
    except RosterError as error:
        raise RosterError(f"students: {error}") from None
    on_roster = {student.repository.lower() for shard in all_shards for student in shard.students}
    if named - on_roster:
        raise RosterError(f"not on the roster: {', '.join(sorted(named - on_roster))}")
    selected = []
    for shard in all_shards:
        whole = shard.number in chosen
        kept = [student for student in shard.students if whole or student.repository.lower() in named]
        if kept:
            selected.append(Shard(shard.number, tuple(kept)))
    return selected


def matrix(selected: list[Shard], run_deadline: str, count: int) -> dict:
    """The workflow's matrix: one job per shard, each student with the deadline that applies to them."""
    return {
        "include": [
            {
                "shard": shard.number,
                "of": count,
                "size": len(shard.students),
                "students": [
                    {"repository": student.repository, "deadline": student.deadline or run_deadline}
                    for student in shard.students
                ],
            }
            for shard in selected
        ]
    }


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m autograder.roster.shards", description=__doc__.split("\n")[0])
    parser.add_argument("roster", type=Path)
    parser.add_argument("deadline", help="the run's deadline, ISO 8601")
    parser.add_argument("--shard-size", type=int, default=SHARD_SIZE, help=f"students per shard (default {SHARD_SIZE})")
    parser.add_argument("--students", default="", help="re-run only these repositories")
    parser.add_argument("--shards", default="", help="re-run only these shards, e.g. '3 7 10-12'")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = _arguments(argv)
    try:
        students, when = read(args.roster), deadline(args.deadline)
        all_shards = shards(students, args.shard_size)
        selected = select(all_shards, args.students, args.shards)
    except (OSError, RosterError) as error:
        print(f"roster: {error}", file=sys.stderr)
        return 2
    print(f"matrix={json.dumps(matrix(selected, when, len(all_shards)), separators=(',', ':'))}")
    print(f"deadline={when}")
    print(f"shards={len(selected)}")
    own = sum(student.deadline is not None for student in students)
    print(f"{len(students)} repositories in {len(all_shards)} shards, deadline {when}", file=sys.stderr)
    print(f"{own} with a deadline of their own", file=sys.stderr)
    for shard in selected:
        names = [student.repository for student in shard.students]
        listing = names[0] if len(names) == 1 else f"{names[0]} ... {names[-1]}"
        print(f"shard {shard.number}: {len(names)} ({listing})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

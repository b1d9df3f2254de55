"""The roster file, its per-student deadlines, and its shards: the roster workflow's matrix."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT

from autograder.roster import shards
from autograder.roster.shards import MAX_SHARDS, Student

RUN_DEADLINE = "2026-12-04T23:59:00+01:00"


def names(students: list[Student]) -> list[str]:
    return [student.repository for student in students]


def test_it_reads_one_repository_per_line_skipping_comments_and_repeats():
    text = "# week 7\ncourse/alice-week07\n\n  https://github.com/course/bob-week07.git  # late\ncourse/alice-week07\n"
    assert names(shards.parse(text)) == ["course/alice-week07", "course/bob-week07"]


def test_it_reads_a_deadline_after_the_repository_for_that_student_only():
    text = (
        "course/alice-week07\ncourse/bob-week07   2026-12-06T23:59:00+01:00  # extension\ncourse/cy 2026-12-07T12:00\n"
    )
    assert shards.parse(text) == [
        Student("course/alice-week07"),
        Student("course/bob-week07", "2026-12-06T23:59:00+01:00"),
        Student("course/cy", "2026-12-07T12:00:00+00:00"),
    ]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("alice", "not a repository"),
        ("../etc/passwd", "not a repository"),
        ("course/..", "not a repository"),
        ("a/b/c", "not a repository"),
        ("$(id)/x", "not a repository"),
        ("course/alice week07", "not an ISO timestamp"),
        ("course/alice 2026-12-06 23:59", "has 3 fields"),
    ],
)
def test_it_refuses_a_line_that_is_not_a_repository_and_a_deadline(line, problem):
    with pytest.raises(shards.RosterError, match=f"roster line 2: .*{problem}"):
        shards.parse(f"course/ok\n{line}\n")


def test_it_reads_a_local_rosters_folder_names_beside_repositories_for_the_commands_that_read_gradings():
    text = "# a local roster\nalice\ncourse/bob-week07\nalice\ncarol.v2  2026-12-06T23:59:00+01:00\n"
    assert names(shards.parse(text, folders=True)) == ["alice", "course/bob-week07", "carol.v2"]
    with pytest.raises(shards.RosterError, match=r"line 2: 'alice' is a folder's name, not a repository .*workflow"):
        shards.parse(text)  # the workflow clones repositories: a folder's name is no use there
    with pytest.raises(shards.RosterError, match=r"line 1: '\.hidden' is not a repository .* or a folder's name"):
        shards.parse(".hidden\n", folders=True)


def test_it_finds_the_folder_a_misspelt_line_meant_by_edit_distance_ignoring_owners_and_shared_affixes():
    lines = ["course/week07-alice", "course/week07-dnaa", "course/week07-bob"]
    assert shards.closest("course/week07-dnaa", ["course/week07-dana", "course/week07-zed"], lines) == [
        "course/week07-dana"
    ]
    assert shards.closest("course/week07-alice", ["alice", "bob"], lines) == ["alice"]  # a local folder's name
    # GitHub Classroom's names share 'week07-': it makes no two students alike
    classroom = ["course/week07-alice", "course/week07-zed"]
    assert shards.closest("course/week07-alice", ["course/week07-bob"], classroom) == []
    assert shards.closest("hal", ["bob", "fay", "gus"], ["hal", "ada"]) == []


def test_it_refuses_a_line_that_misnames_a_folder_and_lists_a_line_with_no_folder_and_nothing_close():
    folders = {"course__alice": "course/alice", "course__dana": "course/dana", "bob": "bob"}
    with pytest.raises(
        shards.RosterError, match=r"^week07.txt: course/dnaa names no folder of results: did you mean course/dana\?"
    ):
        shards.check_names(Path("week07.txt"), ["course/alice", "course/dnaa", "bob"], folders, "results")
    shards.check_names(Path("week07.txt"), ["course/alice", "course/dana", "bob", "course/hal"], folders, "results")
    assert shards.without_folder(["course/alice", "course__dana", "bob", "course/hal"], folders) == ["course/hal"]
    assert shards.no_folder("course/hal") == shards.NOTHING_UPLOADED and shards.no_folder("hal") == shards.NOT_GRADED


def test_it_refuses_the_same_repository_twice_with_different_deadlines():
    with pytest.raises(shards.RosterError, match="line 3: course/Alice is on line 1 with another deadline"):
        shards.parse("course/alice\ncourse/bob\ncourse/Alice 2026-12-06T23:59:00+01:00\n")


def test_it_refuses_a_roster_without_a_repository():
    with pytest.raises(shards.RosterError, match="names no repository"):
        shards.parse("# nobody yet\n")


@pytest.mark.parametrize(
    ("given", "normalised"),
    [("2026-12-04T23:59:00+01:00", "2026-12-04T23:59:00+01:00"), ("2026-12-04T23:59", "2026-12-04T23:59:00+00:00")],
)
def test_it_normalises_the_deadline_to_an_iso_timestamp_with_offset(given, normalised):
    assert shards.deadline(given) == normalised


def test_it_refuses_a_deadline_that_is_not_iso():
    with pytest.raises(shards.RosterError, match="not an ISO timestamp"):
        shards.deadline("next friday")


def a_roster(count: int) -> str:
    """`count` students, every seventh with an extension."""
    lines = [f"course/student{n:04d}" + ("  2026-12-06T23:59:00+01:00" if n % 7 == 0 else "") for n in range(count)]
    return "# a big course\n" + "\n".join(lines) + "\n"


@pytest.mark.parametrize(("size", "count", "sizes"), [(30, 34, {29, 30}), (1, MAX_SHARDS, {3, 4}), (1000, 1, {1000})])
def test_it_splits_1000_students_into_at_most_256_shards_of_even_size_in_roster_order(size, count, sizes):
    students = shards.parse(a_roster(1000))
    cut = shards.shards(students, size)
    assert len(cut) == count and [shard.number for shard in cut] == list(range(1, count + 1))
    assert {len(shard.students) for shard in cut} == sizes
    assert [student for shard in cut for student in shard.students] == students


def test_its_matrix_gives_each_student_the_deadline_that_applies_to_them():
    students = shards.parse(a_roster(1000))
    cut = shards.shards(students)
    include = shards.matrix(cut, RUN_DEADLINE, len(cut))["include"]
    assert len(include) == 34 and include[0]["shard"] == 1 and include[0]["of"] == 34 and include[0]["size"] == 30
    first = include[0]["students"]
    assert first[0] == {"repository": "course/student0000", "deadline": "2026-12-06T23:59:00+01:00"}
    assert first[1] == {"repository": "course/student0001", "deadline": RUN_DEADLINE}
    assert sum(len(entry["students"]) for entry in include) == 1000


def test_it_selects_whole_shards_and_single_students_keeping_the_shard_numbers():
    cut = shards.shards(shards.parse(a_roster(100)), 10)
    chosen = shards.select(cut, "course/student0005, https://github.com/course/student0099", "3 7-8")
    assert [(shard.number, len(shard.students)) for shard in chosen] == [(1, 1), (3, 10), (7, 10), (8, 10), (10, 1)]
    assert names(list(chosen[0].students)) == ["course/student0005"]
    assert shards.select(cut) == cut


@pytest.mark.parametrize(
    ("students", "numbers", "problem"),
    [
        ("course/nobody", "", "not on the roster: course/nobody"),
        ("nobody", "", "students: 'nobody' is not a repository"),
        ("", "11", "shard 11: the roster has shards 1 to 10"),
        ("", "0", "shard 0: the roster has shards 1 to 10"),
        ("", "two", "shard 'two' is not a number"),
    ],
)
def test_it_refuses_a_selection_outside_the_roster(students, numbers, problem):
    cut = shards.shards(shards.parse(a_roster(100)), 10)
    with pytest.raises(shards.RosterError, match=problem):
        shards.select(cut, students, numbers)


def run_module(*arguments: str) -> subprocess.CompletedProcess:
    """The module as the workflow's first job runs it: python -S, nothing but the standard library."""
    command = [sys.executable, "-S", "-m", "autograder.roster.shards", *arguments]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_it_prints_step_outputs_for_the_workflow_with_the_standard_library_only(tmp_path):
    roster = tmp_path / "roster.txt"
    roster.write_text(a_roster(1000))
    done = run_module(str(roster), "2026-12-04T23:59:00Z", "--shard-size", "30", "--shards", "2")
    assert done.returncode == 0, done.stderr
    outputs = dict(line.split("=", 1) for line in done.stdout.splitlines())
    include = json.loads(outputs["matrix"])["include"]
    assert [entry["shard"] for entry in include] == [2] and include[0]["students"][0][
        "repository"
    ] == "course/student0030"
    assert outputs["deadline"] == "2026-12-04T23:59:00+00:00" and outputs["shards"] == "1"
    assert "1000 repositories in 34 shards" in done.stderr and "143 with a deadline of their own" in done.stderr


def test_it_exits_2_with_the_reason_for_a_bad_roster(tmp_path):
    roster = tmp_path / "roster.txt"
    roster.write_text("course/alice\ncourse/bob friday\n")
    done = run_module(str(roster), "2026-12-04T23:59:00Z")
    assert done.returncode == 2 and done.stdout == ""
    assert "roster: roster line 2: deadline 'friday' is not an ISO timestamp" in done.stderr


def test_the_example_roster_in_this_repository_is_only_comments():
    with pytest.raises(shards.RosterError, match="names no repository"):
        shards.read(ROOT / "rosters" / "week07.txt")

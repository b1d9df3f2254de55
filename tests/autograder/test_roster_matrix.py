"""The roster file read into the roster-grading workflow's matrix, and its deadline."""

import json
import subprocess
import sys

import pytest
from support import ROOT

from autograder import roster_matrix


def test_it_reads_one_repository_per_line_skipping_comments_and_repeats():
    text = "# week 7\ncourse/alice-week07\n\n  https://github.com/course/bob-week07.git  # late\ncourse/alice-week07\n"
    assert roster_matrix.parse(text) == ["course/alice-week07", "course/bob-week07"]


@pytest.mark.parametrize("line", ["alice", "course/alice week07", "../etc/passwd", "course/..", "a/b/c", "$(id)/x"])
def test_it_refuses_a_line_that_is_not_a_repository(line):
    with pytest.raises(roster_matrix.RosterError, match="roster line 1"):
        roster_matrix.parse(line)


def test_it_refuses_a_roster_without_a_repository():
    with pytest.raises(roster_matrix.RosterError, match="names no repository"):
        roster_matrix.parse("# nobody yet\n")


def test_it_gives_each_repository_an_artifact_safe_id():
    assert roster_matrix.matrix(["course/alice-week07"]) == {
        "include": [{"repository": "course/alice-week07", "id": "course__alice-week07"}]
    }


@pytest.mark.parametrize(
    ("given", "normalised"),
    [("2026-12-04T23:59:00+01:00", "2026-12-04T23:59:00+01:00"), ("2026-12-04T23:59", "2026-12-04T23:59:00+00:00")],
)
def test_it_normalises_the_deadline_to_an_iso_timestamp_with_offset(given, normalised):
    assert roster_matrix.deadline(given) == normalised


def test_it_refuses_a_deadline_that_is_not_iso():
    with pytest.raises(roster_matrix.RosterError, match="not an ISO timestamp"):
        roster_matrix.deadline("next friday")


def test_it_prints_step_outputs_for_the_workflow_with_the_standard_library_only(tmp_path):
    roster = tmp_path / "roster.txt"
    roster.write_text("course/alice-week07\n")
    command = [sys.executable, "-S", "-m", "autograder.roster_matrix", str(roster), "2026-12-04T23:59:00Z"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    outputs = dict(line.split("=", 1) for line in done.stdout.splitlines())
    assert json.loads(outputs["matrix"])["include"][0]["id"] == "course__alice-week07"
    assert outputs["deadline"] == "2026-12-04T23:59:00+00:00"


def test_the_example_roster_in_this_repository_is_only_comments():
    with pytest.raises(roster_matrix.RosterError, match="names no repository"):
        roster_matrix.read(ROOT / "rosters" / "week07.txt")

"""A student who fills the disk costs only their own grading: the neighbour graded beside them keeps its grade.

A roster of the disk_filler attack and the reference (another student) is graded with `grade-all --jobs 2`,
as the roster job grades it, in the root tier (a tmpfs per worker) and an unprivileged one (Landlock: a
watched scratch). The disk bound is the attack group's (64 MB, by a rubric file).
"""

from pathlib import Path

import attack_suite as suite
import pytest
import tiers
from neighbours import run_roster
from support import SOLUTIONS, build_submission

pytestmark = pytest.mark.deployed  # each tier grades with the grader as deployed

ONLY = ["masked_mean", "gather_final"]  # the attacked function, and one it leaves honest
LEFT_BEHIND = 1 << 20  # bytes: what the grading's temporary folder may still hold after it (nothing, really)


@pytest.fixture(autouse=True)
def producible() -> None:
    tiers.require()


@pytest.mark.parametrize("name", ["root", "landlock"])
def test_it_keeps_a_disk_filler_from_its_neighbour_and_from_the_host(name, tmp_path_factory):
    tier = tiers.TIERS[name]
    work = tiers.work_folder(tmp_path_factory.mktemp(f"neighbours-{name}"), tier)
    group = suite.GROUPS["disk"]
    attacker = suite.build(group, tiers.work_folder(work / "attacker", tier))
    try:
        students = {"attacker": attacker.submission, "neighbour": build_submission(work / "neighbour", SOLUTIONS)}
        inside = tiers.work_folder(work / "roster", tier)  # the tier's command sees this folder only
        roster = run_roster(students, tier, inside, ONLY, rubric=suite.rubric_with_limits(group, inside))
        graded = roster.results
    finally:
        attacker.server.close()
        suite.kill_all(attacker.tokens)
    assert set(graded) == {"attacker", "neighbour"}, f"results.json missing in the {name} tier: {roster.output}"
    assert [test["name"] for test in graded["neighbour"]["tests"] if test["score"] != test["max_score"]] == []
    for test in graded["attacker"]["tests"]:
        if test["name"].startswith("masked_mean"):
            assert test["score"] == 0 and "your code wrote more than 64 MB to disk" in test["output"], test
        else:
            assert test["score"] == test["max_score"], test  # the next call got a fresh worker and disk
    assert "disk: " in graded["neighbour"]["extra_data"]["isolation"]["summary"]
    mark = attacker.marks["disk_filler"]
    places = (mark, Path(f"/var/tmp/{mark.name}-var"), Path(f"/dev/shm/{mark.name}-shm"))
    escaped = [path for path in places if path.exists()]
    for path in escaped:
        path.unlink()
    assert escaped == [], "the attack wrote outside its bound"
    assert roster.left_on_disk < LEFT_BEHIND, "the gradings left files on the host's disk"
    assert roster.left == [], roster.left

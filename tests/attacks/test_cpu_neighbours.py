"""The attacks aimed at the other gradings, CPU: A student's spinners or thread bomb cost its neighbour nothing.

A hosted runner's job runs in a single service cgroup, where the scheduler's autogroups do not
apply: emulated here by a cgroup-v1 cpu group shared by the whole `grade-all --jobs 2` run. The
roster is an attacker and the reference as another student, graded in the root tier as deployed.
The neighbour must get what it gets alone (full marks on the graded items), the attacker what it
earns, and no process nor cgroup of the run may be left. Never a time.
"""

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import attack_suite as suite
import pytest
import tiers
from neighbours import full_marks, run_roster
from support import SOLUTIONS, build_submission

from autograder.sandbox import cgroup

pytestmark = pytest.mark.deployed  # graded by the grader as deployed, in the root tier

CPU = Path("/sys/fs/cgroup/cpu")  # this machine's v1 cpu hierarchy
ATTACKERS = [attack for attack in suite.ATTACKS if attack.name in ("cpu_hog", "thread_bomb")]


@pytest.fixture
def shared_cpu_group() -> Iterator[Path]:
    """One cpu cgroup for this test process and all it starts (the runner's service cgroup), removed after."""
    tiers.require()
    found = cgroup.find()
    if not isinstance(found, cgroup.Hierarchy) or found.version != 1 or not (CPU / "cgroup.procs").exists():
        pytest.skip("the shared CPU group is emulated with a cgroup-v1 cpu hierarchy at /sys/fs/cgroup/cpu")
    group = found.parents["cpu"] / f"autograde-neighbours-{secrets.token_hex(4)}"
    group.mkdir()
    (group / "cgroup.procs").write_text(str(os.getpid()))
    try:
        yield group
    finally:
        (found.parents["cpu"] / "cgroup.procs").write_text(str(os.getpid()))
        cgroup.Group(1, {"cpu": group}).remove()


@pytest.mark.parametrize("attack", ATTACKERS, ids=[attack.name for attack in ATTACKERS])
def test_a_neighbour_gets_what_it_gets_alone_beside_a_cpu_hog(attack, shared_cpu_group, tmp_path):
    tier = tiers.TIERS["root"]
    built = suite.build(suite.GROUPS[attack.group], tmp_path / "attacker")
    built.server.close()
    only = [*attack.expected, "rnn_forward"]  # the neighbour's items: those the attack aims at, and another
    students = {"attacker": built.submission, "neighbour": build_submission(tmp_path / "reference", SOLUTIONS)}
    try:
        roster = run_roster(students, tier, tiers.work_folder(tmp_path / "work", tier), only)
    finally:
        suite.kill_all(built.tokens)
    assert set(roster.results) == set(students), roster.output
    assert full_marks(roster.results["neighbour"]) == [], roster.output
    assert full_marks(roster.results["attacker"]) == [], "the attacker earns its right answers"
    for student in roster.results.values():
        assert student["extra_data"]["isolation"]["fair_cpu"], student["extra_data"]["isolation"]
    assert roster.left == [], f"a process of the run outlived it: {roster.left}"
    assert groups_in(shared_cpu_group) == [], "a worker's cgroup outlived the run (each has its cpu folder there)"


def groups_in(folder: Path) -> list[Path]:
    return sorted(path for path in folder.iterdir() if path.is_dir())

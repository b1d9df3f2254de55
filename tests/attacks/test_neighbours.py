"""The attacks aimed at the other gradings: CPU. A student's spinners or thread bomb cost its neighbour nothing.

A hosted runner's job runs in a single service cgroup, where the scheduler's autogroups do not
apply: emulated here by a cgroup-v1 cpu group shared by the whole `grade-all --jobs 2` run. The
roster is an attacker and the reference as another student, graded in the root tier as deployed.
The neighbour must get what it gets alone (full marks on the graded items), the attacker what it
earns, and no process nor cgroup of the run may be left. Never a time.
"""

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import attack_suite as suite
import pytest
import tiers
from neighbours import grade_roster
from support import SOLUTIONS, build_submission

from autograder.sandbox import cgroup

pytestmark = pytest.mark.deployed  # graded by the grader as deployed, in the root tier

CPU = Path("/sys/fs/cgroup/cpu")  # this machine's v1 cpu hierarchy
EXIT_GRACE = 120.0  # seconds the run's processes get to finish exiting once grade-all has returned
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
    work = tiers.work_folder(tmp_path / "work", tiers.TIERS["root"])
    built = suite.build(suite.GROUPS[attack.group], tmp_path / "attacker")
    built.server.close()
    only = [*attack.expected, "rnn_forward"]  # the neighbour's items: those the attack aims at, and another
    students = {"attacker": built.submission, "neighbour": build_submission(tmp_path / "reference", SOLUTIONS)}
    try:
        results = grade_roster(students, tiers.TIERS["root"], work, only)
    finally:
        # grade-all's fork server (its command line names the work folder) ends after grade-all, once its
        # interpreter, which holds torch, has finalised: a bound on that wait, never a verdict on a busy machine
        leftover = suite.survivors({"": str(work), **built.tokens}, wait=EXIT_GRACE)
        seen = describe(leftover)
        suite.kill_all({"": str(work), **built.tokens})
    assert full_marks(results["neighbour"]), (work / "grade-all.log").read_text()[-3000:]
    assert full_marks(results["attacker"]), "the attacker earns its right answers (rnn_forward: the reference's)"
    for student in results.values():
        assert student["extra_data"]["isolation"]["fair_cpu"], student["extra_data"]["isolation"]
    assert leftover == {}, f"a process of the run outlived it: {seen}"
    assert groups_in(shared_cpu_group) == [], "a worker's cgroup outlived the run (each has its cpu folder there)"


def full_marks(results: dict) -> bool:
    tests = results.get("tests", [])
    return bool(tests) and all(test["score"] == test["max_score"] for test in tests)


def describe(leftover: dict[str, list[int]]) -> list[str]:
    found = []
    for pid in (pid for pids in leftover.values() for pid in pids):
        with contextlib.suppress(OSError):
            found.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:300].decode(errors="replace"))
    return found


def groups_in(folder: Path) -> list[Path]:
    return sorted(path for path in folder.iterdir() if path.is_dir())

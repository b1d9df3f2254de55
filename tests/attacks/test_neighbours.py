"""Another student's grading is out of reach: `grade-all --jobs 2` with an attacker beside the reference.

The attacker lays over the reference the attacks on other processes by their id (prlimit64,
setpriority, sched_setaffinity, sched_setscheduler, a supervisor without descriptors and a
process left behind to hunt the workers), aimed at every process it sees: the roster runs in a PID
namespace of the test's own (tests/helpers/neighbours.py). Graded in every tier: those where the
worker shares the grader's uid (landlock; fallback, where grade-all would refuse, so graded with
--no-require-isolation: the seccomp filter alone stands there), Docker's defaults (Gradescope's
container), an unprivileged user with user namespaces, and root.
"""

import pytest
import tiers
from neighbours import attacker, full_marks, run_roster
from support import SOLUTIONS, build_submission

from autograder.sandbox import record, seccomp

pytestmark = [pytest.mark.deployed, pytest.mark.attacks]
ONLY = ["gather_final", "masked_mean", "lstm_step", "set_forget_bias"]  # cheap, and every attack's function
ATTACKS = ["prlimit_others", "starve_supervisor", "reschedule_others"]
OPTIONS = {
    "root": (),
    "docker": (),  # Gradescope's container: a uid of its own, no namespaces
    "user namespace": (),
    "landlock": (),
    "fallback": ("--no-require-isolation",),
}


@pytest.fixture(autouse=True)
def producible() -> None:
    tiers.require()
    if not seccomp.supported():
        pytest.skip("no seccomp filter for this architecture: another process is within reach")


@pytest.mark.parametrize("name", list(OPTIONS))
def test_a_neighbour_gets_the_grade_it_gets_alone_whatever_the_student_beside_it_does(name, tmp_path):
    tier = tiers.TIERS[name]
    work = tiers.work_folder(tmp_path / "work", tier)
    students = {
        "attacker": attacker(ATTACKS, work / "built" / "attacker"),
        "neighbour": build_submission(work / "built" / "neighbour", SOLUTIONS),
    }
    roster = run_roster(students, tier, work / "roster", ONLY, *OPTIONS[name])
    assert set(roster.results) == set(students), roster.output
    assert set(roster.gradebook) == set(students), roster.output
    for student, results in roster.results.items():
        assert full_marks(results) == [], (student, full_marks(results), roster.output)  # the attacker: all refused
        assert roster.gradebook[student]["total"] == roster.gradebook[student]["max"], roster.gradebook[student]
        isolation = record.from_dict(results["extra_data"]["isolation"])
        assert isolation.others_out_of_reach, isolation
        assert name == "fallback" or isolation.missing() == [], isolation  # fallback: graded without them
    assert roster.left == [], roster.left
    assert roster.status == 0, roster.output
    assert not list((work / "built").glob("mark-*")), "an attack got through and left its trace"

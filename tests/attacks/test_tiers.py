"""The attacks again, in every situation a grading runs in that this machine can produce from root.

tests/helpers/tiers.py makes each tier: root (a grader's machine, sudo), Docker's defaults
(Gradescope), an unprivileged user with user namespaces, one with Landlock only (an Ubuntu 24.04
runner without sudo), one with neither. Each grades with the grader as deployed (installed, not
editable, in a venv of a world-readable interpreter: tests/helpers/deployed.py). In each, a grading
with --require-isolation gives every attack exactly what it honestly earns and keeps it inside, or
refuses before any student code runs; and results.json names the layers that held.

The attacks whose defence is the same in every tier (configuration files, return values, output)
run only in test_attacks.py. Those that meet the OS (imports and the network, reading the
instructor's files, processes, kills, reaching other processes by their id) run in every tier (but
fallback, which refuses: one grading shows it); hangs and exits, whose processes are stopped
otherwise without a PID namespace, where the supervisor alone stops them (Landlock only); answers
far larger than asked for, and tensors that claim more than they hold (returned_tensors), in every tier
that grades: the grader's own reading of them, its memory and its time, is the deployed grader's in that
tier's process and user.
The threshold attacks (a rule, an evaluation switch, a replaced training routine) run in every tier
that grades: the grader decides those items from parameters, whatever layers the worker has.
"""

from collections.abc import Iterator

import attack_suite as suite
import pytest
import tiers
from once_per_run import run_folder

from autograder.sandbox import record

pytestmark = pytest.mark.deployed  # each tier grades with the grader as deployed

TIER_GROUPS = suite.TIER_GROUPS  # the groups graded in each tier (in attack_suite: test_attacks reads it too)


@pytest.fixture(autouse=True)
def producible() -> None:
    tiers.require()


@pytest.fixture(scope="module")
def gradings(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[suite.Gradings]:
    """Each (tier, group) grading, done once per module; every one the selected tests need starts at once."""
    started = suite.Gradings(tmp_path_factory.mktemp, run_folder(tmp_path_factory))
    for tier, group in suite.selected(request.session) if not tiers.possible() else []:
        started.start(group, tier)
    yield started
    started.close()


def cases() -> list:
    return [
        suite.case(attack, tiers.TIERS[name])
        for name, groups in TIER_GROUPS.items()
        for attack in suite.ATTACKS
        if attack.group in groups
    ]


@pytest.mark.parametrize(("tier", "attack"), cases())
def test_it_holds_every_attack_in_each_tier_or_refuses_to_grade(tier, attack, gradings):
    found = suite.problems(attack, gradings(attack.group, tier), tiers.expected(tier))
    assert found == [], f"attack {attack.name} ({attack.group} group) in the {tier.name} tier:\n" + "\n".join(found)


@pytest.mark.parametrize("name", list(TIER_GROUPS))
def test_it_records_the_layers_each_tier_gives_and_those_that_failed(name, gradings):
    tier = tiers.TIERS[name]
    isolation = record.from_dict(gradings(TIER_GROUPS[name][0], tier).isolation)
    expectation = tiers.expected(tier)
    giving = {layer for layers in isolation.mechanisms.values() for layer in layers}
    assert giving == set(expectation.layers), isolation
    assert [name for name in record.LAYERS if isolation.layer(name).in_force] == list(expectation.layers), isolation
    assert isolation.layer("landlock").abi == expectation.abi, isolation
    if expectation.namespaces:
        assert isolation.layer("namespaces").detail == expectation.namespaces, isolation
    assert [failure.layer for failure in isolation.failures] == list(expectation.failing), isolation
    assert all(failure.step for failure in isolation.failures), isolation  # each names the step that failed
    if not expectation.refused:  # after each worker, the grader looked for its processes by every mark it has
        marks = {"cgroup": ("cgroup",), "uid": ("uid", "ipc", "keys"), "seccomp": ("adopted",)}
        wanted = [mark for layer, found in marks.items() if layer in expectation.layers for mark in found]
        assert isolation.left_behind is not None and sorted(isolation.left_behind.checked) == sorted(wanted), isolation
        assert isolation.left_behind.proven_none and isolation.no_process_outlives, isolation

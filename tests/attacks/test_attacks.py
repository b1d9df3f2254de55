"""Adversarial submissions: an attack never earns more than its honest work, and leaves nothing behind.

Every attack (tests/helpers/attack_suite.py, files in submissions/) is graded with
--require-isolation as this process runs: it must score exactly what it honestly earns, leave no
process and write nothing outside the grading; or, where this machine cannot isolate the worker,
the grading must refuse (exit 2, the reason in results.json) before any student code runs.
test_tiers.py grades them again in the other situations this machine can produce. Where this process
is root and the tiers can be produced, a group test_tiers grades in the root tier is graded once, by
the deployed grader's command line as this process runs, and both modules read that grading.
"""

import tempfile
from collections.abc import Iterator
from pathlib import Path

import attack_suite as suite
import pytest
from once_per_run import run_folder
from tiers import expected

from autograder import rubric
from autograder.sandbox import Worker, probe, zygote
from autograder.student import Remote


@pytest.fixture(scope="module")
def gradings(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[suite.Gradings]:
    """Each group's grading, done once per module; every grading the selected tests need starts at once."""
    started = suite.Gradings(tmp_path_factory.mktemp, run_folder(tmp_path_factory))
    for tier, group in suite.selected(request.session):
        started.start(group, tier)
    yield started
    started.close()


# -- the table itself ---------------------------------------------------------------------------
def test_it_has_a_folder_for_every_attack_and_an_attack_for_every_folder():
    folders = {path.name for path in suite.SUBMISSIONS.iterdir() if path.is_dir()}
    names = [attack.name for attack in suite.ATTACKS]
    assert len(names) == len(set(names))
    assert folders == set(names)
    for attack in suite.ATTACKS:
        assert tuple(path.as_posix() for path in suite.attack_files(attack)) == attack.files, attack.name


def test_it_groups_only_attacks_that_share_no_file_and_no_function():
    functions = set(rubric.load().functions)
    for group in suite.GROUPS.values():
        attacks = suite.members(group)
        assert attacks, f"group {group.name} has no attack"
        files = [path for attack in attacks for path in suite.attack_files(attack)]
        assert len(files) == len(set(files)), f"group {group.name}: two attacks write the same file"
        graded = [function for attack in attacks for function in dict.fromkeys(map(suite.function_of, attack.expected))]
        assert len(graded) == len(set(graded)), f"group {group.name}: a function is graded for two reasons"
        assert set(graded) <= functions


# -- the attacks ------------------------------------------------------------------------------
@pytest.mark.parametrize("attack", [suite.case(attack) for attack in suite.ATTACKS])
def test_it_gives_an_attack_no_more_than_it_honestly_earns_and_keeps_it_inside(attack, gradings):
    found = suite.problems(attack, gradings(attack.group), expected(suite.HERE))
    assert found == [], f"attack {attack.name} ({attack.group} group, {suite.HERE.name}):\n" + "\n".join(found)


# -- the zygote the pool's gradings share ------------------------------------------------------------
ONE = "def one():\n    return 1\n"


def test_the_attacks_graded_through_one_zygote_leave_it_serving_the_next_grading(gradings):
    """The gradings made in this process share one zygote, as a grade-all run's do: none of the attacks graded
    there stops it, and a grading after them is still forked from it."""
    pooled = [name for name, group in suite.GROUPS.items() if suite.in_the_root_tier(name) is None and not group.cli]
    for name in pooled:
        gradings(name)
    if not probe.found()[0].namespaces:
        assert gradings.warm is None  # no zygote where the worker has no namespaces
        return
    assert gradings.warm is not None and gradings.warm.process.poll() is None, "an attack ended the pool's zygote"
    with tempfile.TemporaryDirectory(prefix="autograde-test-") as folder:  # where a worker's uid reaches it
        package = Path(folder) / "submission" / "exercises"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "after.py").write_text(ONE)
        zygote.use(gradings.warm.address)
        try:
            with Worker(package.parent, Path(folder)) as worker:
                assert Remote(worker).run("after.one").value == 1
                assert worker.zygote_address == gradings.warm.address and worker.chains == 1, worker.parent_output
        finally:
            zygote.use(None)

"""Which known mistakes' calls the release ships (`public_mistakes.select`), on records made up here; and the
recording itself, a child per public test module, each read back from the cache while nothing of it changed."""

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from autograder.checks import catalogue, errors
from autograder.locations import PUBLIC_TESTS
from autograder.release import public_mistakes

SAME = public_mistakes.public_conftest().same
TEST = "test_recurrence::test_it_equals_nn_rnn_holding_the_same_weights"
INPUTS = [[[2, 5, 3], -7.1525197, 22.667192], [[4], 0.37539224, 0.47122122]]


def run(returned: list[float], failed: bool = True) -> dict[str, Any]:
    return {"failed": failed, "calls": [{"inputs": INPUTS, "returned": {"shape": [2], "values": returned}}]}


def records(**variants: dict[str, Any]) -> dict[str, Any]:
    """One test's record: the reference returns [1, 2]; `R1_ih=...` is the variant "R1:ih"."""
    found = {key.replace("_", ":").replace("AND", "+"): value for key, value in variants.items()}
    reference = run([1.0, 2.0], failed=False)
    return {TEST: {"function": "recurrence.rnn_forward", "in_place": False, "reference": reference, "variants": found}}


def kept(values: public_mistakes.Values, test: str = TEST) -> list[str]:
    """The variants whose calls ship for the test, in order."""
    return list(values.shipped["tests"].get(test, {}).get("mistakes", {}))


def test_it_ships_a_failing_variants_calls_and_names_its_mistake():
    values = public_mistakes.select(records(R1=run([1.0, 3.0])), SAME)
    assert kept(values) == ["R1"]
    assert values.named == {"R1": {TEST}} and values.visible == {"R1": {TEST}}
    assert values.shipped["mistakes"] == {"R1": catalogue.feedback("R1")}


def test_it_ships_the_graders_table_of_pytorchs_errors_explained_with_any_values():
    assert public_mistakes.select({}, SAME).shipped["errors"] == errors.shipped()
    assert public_mistakes.select(records(R1=run([1.0, 3.0])), SAME).shipped["errors"] == errors.shipped()


def test_it_takes_calls_within_the_public_tests_tolerance_for_the_references():
    values = public_mistakes.select(records(R1=run([1.0, 2.0 + 1e-7])), SAME)
    assert kept(values) == [] and values.named == {} and values.visible == {}


def test_it_names_neither_of_two_mistakes_whose_calls_the_tests_cannot_tell_apart():
    values = public_mistakes.select(records(R1=run([1.0, 3.0]), R3=run([1.0, 3.0 + 1e-7])), SAME)
    assert kept(values) == [] and values.named == {}
    assert values.visible == {"R1": {TEST}, "R3": {TEST}}  # the test fails with either: it sees both


def test_it_ships_a_pairs_calls_under_both_its_mistakes():
    values = public_mistakes.select(records(R1=run([1.0, 3.0]), R1ANDR3=run([5.0, 3.0])), SAME)
    assert kept(values) == ["R1", "R1+R3"]
    assert values.named == {"R1": {TEST}, "R3": {TEST}} and values.visible == {"R1": {TEST}}


def test_it_ships_one_form_of_a_mistake_whose_forms_give_the_same_calls():
    values = public_mistakes.select(records(R1=run([1.0, 3.0]), R1_ih=run([1.0, 3.0]), R1_hh=run([4.0, 3.0])), SAME)
    assert kept(values) == ["R1", "R1:hh"]


def test_it_ships_no_variant_whose_test_passes_or_that_made_no_call():
    silent = {"failed": True, "calls": []}
    values = public_mistakes.select(records(R1=run([1.0, 3.0], failed=False), R3=silent), SAME)
    assert kept(values) == [] and values.visible == {}


def every_pair(records: dict[str, Any]) -> public_mistakes.Values:
    """What select keeps, by comparing every variant's calls with every other's (as the release once did)."""

    def alike(a: list[dict], b: list[dict]) -> bool:
        return len(a) == len(b) and all(map(SAME, a, b))

    tests, visible, named = {}, {}, {}
    for test, record in records.items():
        failing = {k: r["calls"] for k, r in record["variants"].items() if r["failed"] and r["calls"]}
        failing = {k: calls for k, calls in failing.items() if not alike(calls, record["reference"]["calls"])}
        kept: dict[str, list[dict]] = {}
        for key, calls in failing.items():
            mistakes = set(catalogue.ids(key))
            if len(mistakes) == 1:
                visible.setdefault(key.split(":")[0], set()).add(test)
            twins = [other for other, theirs in failing.items() if alike(calls, theirs)]
            if mistakes != set.intersection(*(set(catalogue.ids(other)) for other in twins)):
                continue
            if not any(set(catalogue.ids(other)) == mistakes and alike(calls, kept[other]) for other in kept):
                kept[key] = calls
                named.update({mistake: named.get(mistake, set()) | {test} for mistake in mistakes})
        tests[test] = list(kept)
    return public_mistakes.Values({"tests": tests}, visible, named)


@pytest.mark.parametrize("seed", range(5))
def test_it_keeps_what_comparing_every_pair_of_variants_keeps(seed):
    rng = random.Random(seed)
    keys = ["R1", "R1:ih", "R1:hh", "R3", "R4", "R1+R3", "R1+R4", "R3+R4", "R1+R3+R4"]
    answers = [[1.0, 2.0], [1.0, 2.0 + 1e-7], [1.0, 3.0], [1.0, 3.0 + 1e-7], [4.0, 3.0], [1.0]]
    made = {}
    for number in range(20):
        variants = {key: run(rng.choice(answers), failed=rng.random() < 0.8) for key in rng.sample(keys, 6)}
        made[f"{TEST}[{number}]"] = {**records()[TEST], "variants": variants}
    values, expected = public_mistakes.select(made, SAME), every_pair(made)
    assert {test: kept(values, test) for test in made} == expected.shipped["tests"]
    assert (values.visible, values.named) == (expected.visible, expected.named)


@pytest.mark.release  # the real recording child, over one public test file
def test_its_recording_reports_each_public_test_it_ran_n_of_n(tmp_path):
    for name in ("conftest.py", "test_baseline.py"):
        shutil.copyfile(PUBLIC_TESTS / name, tmp_path / name)
    steps = []
    with public_mistakes.reporting(lambda done, total, label: steps.append((done, total, label))):
        recorded = public_mistakes.record(tmp_path)
    total = steps[0][1]
    assert steps[0] == (0, total, "") and [done for done, _, _ in steps] == list(range(total + 1))
    assert all(label.startswith("test_baseline.py::") for *_, label in steps[1:]) and recorded


def test_its_progress_counts_a_modules_tests_as_last_time_until_its_child_has_counted_them(tmp_path):
    lines = tmp_path / "progress.txt"
    cached = "total 2 test_a.py\n" + "done test_a.py: unchanged, read from the cache\n" * 2
    lines.write_text(cached + "expect 5 test_b.py\nexpect 4 test_c.py\ntotal 6 test_b.py\n")
    with lines.open("a") as child:
        child.write("done exercises/tests/test_b.py::test_it_works[lstm]\n")
    steps = []
    assert public_mistakes._report(lines, -1, lambda *step: steps.append(step)) == 3
    cache_label = "test_a.py: unchanged, read from the cache"
    assert steps == [(0, 12, ""), (1, 12, cache_label), (2, 12, cache_label), (3, 12, "test_b.py::test_it_works[lstm]")]


def public_tests(folder: Path, *modules: str) -> Path:
    """A copy of the public tests' conftest and of the named test modules."""
    folder.mkdir()
    for name in ("conftest.py", *modules):
        shutil.copyfile(PUBLIC_TESTS / name, folder / name)
    return folder


def watch_starts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The modules whose recording child starts from now on, in order."""
    started: list[str] = []
    start = public_mistakes._start
    monkeypatch.setattr(public_mistakes, "_start", lambda module, *rest: started.append(module) or start(module, *rest))
    return started


@pytest.mark.release  # real recording children, over two public test files
def test_a_recording_with_nothing_changed_records_nothing_and_after_a_change_only_that_module(tmp_path, monkeypatch):
    tests, cache = public_tests(tmp_path / "tests", "test_baseline.py", "test_initialisation.py"), tmp_path / "cache"
    cold = json.dumps(public_mistakes.record(tests, cache))
    started, steps = watch_starts(monkeypatch), []
    with public_mistakes.reporting(lambda done, total, label: steps.append((done, total, label))):
        assert json.dumps(public_mistakes.record(tests, cache)) == cold and started == []
    total = steps[0][1]
    assert steps[-1] == (total, total, "test_initialisation.py: unchanged, read from the cache") and total > 2
    with (tests / "test_initialisation.py").open("a", encoding="utf-8") as edited:
        edited.write("\n# an edit that changes no test\n")
    assert json.dumps(public_mistakes.record(tests, cache)) == cold and started == ["test_initialisation.py"]


@pytest.mark.release  # real recording children, over one public test file
def test_a_damaged_entry_is_recorded_again_never_trusted(tmp_path, monkeypatch):
    tests, cache = public_tests(tmp_path / "tests", "test_baseline.py"), tmp_path / "cache"
    cold = json.dumps(public_mistakes.record(tests, cache))
    [entry] = cache.glob("test_baseline-*")
    entry.write_bytes(entry.read_bytes()[:-20])
    started = watch_starts(monkeypatch)
    assert json.dumps(public_mistakes.record(tests, cache)) == cold and started == ["test_baseline.py"]
    assert json.dumps(public_mistakes.record(tests, cache)) == cold and started == ["test_baseline.py"]


@pytest.mark.release  # real recording children: one fails
def test_a_module_that_cannot_be_recorded_fails_the_recording_and_nothing_is_kept(tmp_path):
    tests, cache = public_tests(tmp_path / "tests", "test_baseline.py"), tmp_path / "cache"
    (tests / "test_broken.py").write_text("def test_it_fails():\n    assert False\n", encoding="utf-8")
    with pytest.raises(RuntimeError, match=r"recording test_broken\.py failed \(exit [1-9]"):
        public_mistakes.record(tests, cache, jobs=2)
    assert not cache.exists() or not list(cache.iterdir())

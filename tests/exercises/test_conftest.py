"""The public tests' conftest, in this process: which other TODO's function a failing test is said to use.

The conftest is the file students get (`exercises/tests/conftest.py`); it is loaded here as the release
loads it, and run on the stubs this project installs as `exercises` (or on a student's module written here).
"""

import gc
import importlib
import importlib.util
import sys
import types
from pathlib import Path

import pytest
import torch

from autograder import student
from autograder.checks import errors
from autograder.release.public_mistakes import public_conftest

conftest = public_conftest()
padding = importlib.import_module("exercises.padding")
classifier = importlib.import_module("exercises.classifier")


def test_it_notes_a_helper_called_through_a_name_the_tested_module_imported_it_under(monkeypatch):
    monkeypatch.setattr(classifier, "pool", padding.masked_mean, raising=False)  # from exercises.padding import ...
    # the stub raises NotImplementedError: the call is noted all the same
    with conftest.calling_helpers("classifier") as called, pytest.raises(NotImplementedError):
        classifier.pool(None, None)
    assert called == {"padding.masked_mean"}
    assert classifier.pool is padding.masked_mean  # the module's own names are given back


def test_it_notes_a_helper_called_through_its_own_module():
    with conftest.calling_helpers("classifier") as called, pytest.raises(NotImplementedError):
        padding.gather_final(None, None)
    assert called == {"padding.gather_final"}


def test_it_notes_nothing_the_block_does_not_call_nor_a_function_of_the_tested_modules_own_todos():
    with conftest.calling_helpers("classifier") as untouched:
        pass
    with conftest.calling_helpers("padding") as own, pytest.raises(NotImplementedError):
        padding.masked_mean(None, None)
    assert untouched == set() and own == set()


def test_it_blames_only_a_helper_the_test_called_and_that_fails_its_own_tests(monkeypatch):
    failing = {"padding.masked_mean": "test_masked_mean_x: it returned float64"}
    monkeypatch.setattr(conftest, "own_failure", lambda target: failing.get(target))
    assert conftest.wrong_helpers(set()) == []  # wrong, but not called: a pooling by the last state, say
    assert conftest.wrong_helpers({"padding.gather_final"}) == []  # called, but right by its own tests
    assert conftest.wrong_helpers({"padding.masked_mean", "padding.gather_final"}) == [
        "masked_mean (padding.py) is wrong: test_masked_mean_x: it returned float64; fix it first, this test uses it"
    ]


# -- an error PyTorch raised in the student's code, explained as the grader explains it ------------------------
STUDENT = "import torch\n\n\ndef step(x, weight_ih):\n    return x @ weight_ih\n"


def students(package: Path, module: str, source: str) -> types.ModuleType:
    """`source` written as the student's exercises/<module>.py in `package`, and loaded from there."""
    (package / f"{module}.py").write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"student_{module}", package / f"{module}.py")
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


@pytest.fixture
def released(monkeypatch, tmp_path):
    """A student's repository in tmp_path whose mistakes.json holds the grader's table; its `step` multiplies."""
    package = tmp_path / "exercises"
    (package / "tests").mkdir(parents=True)
    monkeypatch.setattr(conftest, "PACKAGE", package)
    monkeypatch.setattr(conftest, "known", lambda: {"mistakes": {}, "tests": {}, "errors": errors.shipped()})
    return students(package, "recurrence", STUDENT)


def raised_by(code, *args) -> BaseException:
    with pytest.raises(Exception) as raised:
        code(*args)
    return raised.value


def test_it_explains_an_error_pytorch_raised_with_the_line_of_the_students_file_as_the_grader_does(released):
    error = raised_by(released.step, torch.zeros(3, 4), torch.zeros(5, 4))
    frame = '  File "exercises/recurrence.py", line 5, in step\n    return x @ weight_ih'
    assert conftest.explained(error) == [*frame.splitlines(), errors.MEANING + errors.explain(str(error))]
    grader = student._raised("step", {"type": "RuntimeError", "message": str(error), "traceback": frame})
    assert grader.splitlines()[1:] == conftest.explained(error)  # the same lines on both sides


def test_it_explains_an_error_raised_in_a_tests_own_line_without_a_line_of_the_students(released):
    gates = torch.sigmoid(torch.zeros(2, 3, requires_grad=True))
    gates.mul_(2)  # as a student's lstm_step leaves it; the test's backward raises
    error = raised_by(gates.sum().backward)
    assert conftest.explained(error) == [errors.MEANING + errors.explain(str(error))]


def test_it_explains_neither_a_failed_assertion_nor_an_error_the_table_does_not_know(released, monkeypatch):
    assert conftest.explained(AssertionError("mat1 and mat2 shapes cannot be multiplied (3x4 and 5x4)")) == []
    assert conftest.explained(ValueError("a sequence needs two steps")) == []
    monkeypatch.setattr(conftest, "known", lambda: {"mistakes": {}, "tests": {}, "errors": []})  # no mistakes.json
    assert conftest.explained(raised_by(released.step, torch.zeros(3, 4), torch.zeros(5, 4))) == []


def test_its_explanations_start_as_the_graders_do():
    assert conftest.MEANING == errors.MEANING


def test_it_explains_nothing_of_an_exception_whose_message_cannot_be_read(released):
    class Unreadable(RuntimeError):
        def __str__(self) -> str:
            raise ValueError("no message")

    assert conftest.explained(Unreadable("mat1 and mat2 shapes cannot be multiplied (3x4 and 5x4)")) == []


# -- a TODO not written yet: one line, no traceback ------------------------------------------------------------
STUB = 'def forward(x):\n    raise NotImplementedError("TODO 9 · classifier forward: not implemented yet")\n'


@pytest.fixture
def students_module(monkeypatch, tmp_path):
    """Write `source` as the student's exercises/classifier.py (in tmp_path) and load it."""
    package = tmp_path / "exercises"
    package.mkdir()
    monkeypatch.setattr(conftest, "PACKAGE", package)
    return lambda source: students(package, "classifier", source)


def test_it_reports_a_stub_not_written_yet_in_one_line_with_where_it_raised(students_module):
    error = raised_by(students_module(STUB).forward, None)
    where = "(exercises/classifier.py, line 2, in forward)"
    assert conftest.untouched_stub(error) == f"TODO 9 · classifier forward: not implemented yet {where}"


def test_it_keeps_the_traceback_of_a_not_implemented_error_in_the_students_own_words(students_module):
    own = STUB.replace("TODO 9 · classifier forward: not implemented yet", "only lstm cells for now")
    assert conftest.untouched_stub(raised_by(students_module(own).forward, None)) is None


def test_it_keeps_the_traceback_of_the_stubs_words_raised_elsewhere_or_as_another_error(students_module):
    words = "TODO 9 · classifier forward: not implemented yet"
    assert conftest.untouched_stub(NotImplementedError(words)) is None  # no frame of the student's file
    other = students_module(STUB.replace("NotImplementedError", "RuntimeError")).forward
    assert conftest.untouched_stub(raised_by(other, None)) is None


# -- what a run costs: no garbage collection walks what importing and collecting make ---------------------------
def collected(collector_on: bool) -> tuple[bool, bool, int]:
    """Run the conftest's collection wrapper from a collector on or off: (on while collecting, on after, frozen)."""
    (gc.enable if collector_on else gc.disable)()
    frozen = gc.get_freeze_count()
    try:
        wrapper = conftest.pytest_collection(session=None)
        next(wrapper)
        during = gc.isenabled()
        with pytest.raises(StopIteration):
            wrapper.send(None)
        return during, gc.isenabled(), gc.get_freeze_count() - frozen
    finally:
        gc.unfreeze()
        gc.enable()


def test_it_collects_with_the_garbage_collector_off_then_on_again_with_what_collecting_made_frozen():
    during, after, frozen = collected(collector_on=True)
    assert (during, after) == (False, True) and frozen > 0


def test_it_leaves_the_garbage_collector_off_after_collecting_when_it_was_off_before():
    assert collected(collector_on=False)[:2] == (False, False)


def test_importing_it_leaves_the_garbage_collector_as_it_was():
    for collector_on in (True, False):
        (gc.enable if collector_on else gc.disable)()
        try:
            public_conftest()
            assert gc.isenabled() is collector_on
        finally:
            gc.enable()


# -- what a run costs: torch's machinery that no public test needs is left unimported ---------------------------
def test_its_comparisons_ask_torch_about_dtensors_only_once_their_module_is_imported(monkeypatch):
    comparison = sys.modules["torch.testing._comparison"]
    asked = []
    monkeypatch.setattr(comparison, "_unwrap_dtensor_for_comparison", lambda a, b: (asked.append((a, b)), (a, b))[1])
    conftest._compare_without_importing_dtensor()
    monkeypatch.delitem(sys.modules, "torch.distributed.tensor", raising=False)
    with pytest.raises(AssertionError, match="Tensor-likes are not close"):  # torch's comparison, torch's words
        torch.testing.assert_close(torch.zeros(2), torch.ones(2))
    assert asked == [] and "torch.distributed.tensor" not in sys.modules
    monkeypatch.setitem(sys.modules, "torch.distributed.tensor", types.ModuleType("torch.distributed.tensor"))
    torch.testing.assert_close(torch.zeros(2), torch.zeros(2))
    assert len(asked) == 1  # a DTensor may exist now: torch's own check


def test_its_optimizers_step_with_the_training_checks_stand_in_for_torch_dynamo_where_the_release_ships_it(
    monkeypatch,
):
    installed = []
    check = types.ModuleType("exercises.check_training")
    check.dynamo = types.SimpleNamespace(install=lambda: installed.append(True))
    monkeypatch.setitem(sys.modules, "exercises.check_training", check)
    conftest._train_without_importing_dynamo()
    assert installed == [True]
    monkeypatch.setitem(sys.modules, "exercises.check_training", None)  # no training check: the real torch._dynamo
    conftest._train_without_importing_dynamo()
    assert installed == [True]

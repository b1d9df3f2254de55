"""The classifier's forward items, graded by the worker, judge forward's own code: another TODO's mistake is its own.

The student's masked_mean returns float64 (a NumPy mask); their forward pools through it. The
forward items are graded again with a correct masked_mean in its place (its values computed by the grader,
runtime/standins.py, asked for by the worker's proxies, in a worker of its own) and keep what forward earns,
their feedback saying so (a note on a passing item); masked_mean loses its own item (a float32 output's mean
comes back float64: its legal_inputs). A helper that fails any of its own items (values, legal inputs) is stood
in. The threshold items grade the whole pipeline.
"""

import pytest
from support import appended_to, build_submission, grade

from autograder import stubs
from autograder.grading import writers

MASKED_MEAN_IN_FLOAT64 = """
import numpy as np


def masked_mean(output, lengths):
    mask = np.arange(output.shape[1])[None, :] < lengths.numpy()[:, None]
    mask = torch.from_numpy(mask[:, :, None])  # float64 once multiplied below
    return (output * mask).sum(dim=1) / torch.from_numpy(lengths.numpy()[:, None].astype(np.float64))
"""

FORWARD_THROUGH_MASKED_MEAN = """
from exercises.padding import gather_final, masked_mean


def _forward(self, tokens, lengths=None):
    batch, length = tokens.shape
    if lengths is None:
        lengths = torch.full((batch,), length, dtype=torch.long)
    output, _ = self.rnn(self.embedding(tokens))
    if self.pooling == "last":
        pooled = gather_final(output, lengths)
    elif self.pooling == "mean":
        pooled = masked_mean(output, lengths)
    else:
        real = (torch.arange(length).unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(2)
        pooled = output.masked_fill(~real, float("-inf")).amax(dim=1)
    return self.head(pooled)


SequenceClassifier.forward = _forward
"""


def graded(tmp_path, padding: str, classifier: str, functions: list[str]):
    """The reference with these appended to its padding and classifier modules, graded on `functions`' items."""
    edits = {"padding": appended_to("padding", padding), "classifier": appended_to("classifier", classifier)}
    return grade(build_submission(tmp_path, edits=edits), functions)


@pytest.mark.slow
def test_a_float64_masked_mean_costs_its_own_item_and_not_the_classifiers_forward_items(tmp_path):
    functions = ["masked_mean", "SequenceClassifier"]
    result = graded(tmp_path, MASKED_MEAN_IN_FLOAT64, FORWARD_THROUGH_MASKED_MEAN, functions)
    lost = [item for item in result.items if item.function == "masked_mean" and item.score < item.max_score]
    assert [item.name for item in lost] == ["masked_mean: legal inputs"], [(item.name, item.feedback) for item in lost]
    forward = [item for item in result.items if item.function == "SequenceClassifier" and "learns" not in item.name]
    assert len(forward) == 4 and all(item.score == item.max_score for item in forward), [
        (item.name, item.feedback) for item in forward
    ]
    regraded = [item for item in forward if item.note]  # those whose pooling goes through masked_mean
    number = next(todo.number for todo in stubs.todos() if todo.function == "masked_mean")  # its TODO
    assert regraded, "no forward item says it passed only with a correct masked_mean"
    for item in regraded:
        assert "given a correct masked_mean" in item.note and f"masked_mean (TODO {number})" in item.note, item.note
        assert "given a correct masked_mean" in writers.item_text(item)
        assert writers.reason(item) == f"ok ({writers.NOTED})"


GATHER_FINAL_FROM_THE_GRADERS_STANDINS = """
def gather_final(output, lengths):
    from autograde_runtime import standins  # the grader's answer, were it in the worker's runtime

    return standins.gather_final(output, lengths)
"""


@pytest.mark.slow
def test_the_workers_runtime_holds_no_answer_that_a_students_function_could_call(tmp_path):
    edits = {"padding": appended_to("padding", GATHER_FINAL_FROM_THE_GRADERS_STANDINS)}
    result = grade(build_submission(tmp_path, edits=edits), ["gather_final"])
    assert result.items and all(item.score == 0 for item in result.items), [
        (item.name, item.score, item.feedback) for item in result.items
    ]
    assert any("standins" in item.feedback for item in result.items)


# What a student could keep of the stand-ins: forward (right) finds whatever is bound in the student's padding
# module in gather_final's place while the regrade runs, and keeps its compiled code in every folder it may write;
# their own gather_final (zeros: nothing to learn from) runs that code wherever it finds it.
KEEPS_THE_STANDIN = (
    FORWARD_THROUGH_MASKED_MEAN
    + """
import marshal
import sys
from pathlib import Path

KEPT = [Path.home() / "kept", Path.cwd() / "kept", Path("/tmp/kept"), Path("/dev/shm/kept")]


def _keep_the_standin():
    found = sys.modules["exercises.padding"].gather_final
    if found.__code__.co_filename == __file__:  # their own: not graded again yet
        return
    written = 0
    for path in KEPT:
        try:
            path.write_bytes(marshal.dumps(found.__code__))
            written += 1
        except OSError:
            pass
    if not written:
        raise RuntimeError("no folder to keep the stand-in in")  # the regrade would fail: the test sees it


_forward_as_written = SequenceClassifier.forward


def _forward_that_keeps(self, tokens, lengths=None):
    _keep_the_standin()
    return _forward_as_written(self, tokens, lengths)


SequenceClassifier.forward = _forward_that_keeps
"""
)

GATHER_FINAL_FROM_WHAT_WAS_KEPT = """
import marshal
import types
from pathlib import Path


def gather_final(output, lengths):
    for path in [Path.home() / "kept", Path.cwd() / "kept", Path("/tmp/kept"), Path("/dev/shm/kept")]:
        try:
            return types.FunctionType(marshal.loads(path.read_bytes()), {"torch": torch})(output, lengths)
        except Exception:  # no such file, or code that cannot run here (the proxy needs the grader)
            continue
    return torch.zeros_like(output[:, 0])
"""


@pytest.mark.slow
def test_what_a_students_forward_keeps_of_the_standins_is_gone_before_the_threshold_items_train(tmp_path):
    functions = ["gather_final", "SequenceClassifier"]
    result = graded(tmp_path, GATHER_FINAL_FROM_WHAT_WAS_KEPT, KEEPS_THE_STANDIN, functions)
    items = {item.name: item for item in result.items}
    last = items["SequenceClassifier: last pooling"]
    assert last.score == last.max_score and "given a correct gather_final" in last.note, (last.feedback, last.note)
    trained = [item for item in result.items if item.function == "SequenceClassifier" and "learns" in item.name]
    assert len(trained) == 2 and all(item.score == 0 for item in trained), [(i.name, i.feedback) for i in trained]
    assert all(item.score == 0 for item in result.items if item.function == "gather_final")


# What a student could read of the stand-ins while they stand in: forward looks through every frame that called
# it (locals, globals, and the source of what its module's gather_final is now) for a correct helper's code or
# text, and raises all it finds (base64, so that no scrubber recognises it); a right forward otherwise.
RAISES_WHAT_IT_FINDS = (
    FORWARD_THROUGH_MASKED_MEAN
    + """
import base64
import inspect
import sys

ANSWER_MARKS = ("index = (lengths - 1).view(-1, 1, 1)", "total = torch.where(real, output")  # runtime/standins.py


def _texts(value, depth=0):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict) and depth < 3:
        for item in value.values():
            yield from _texts(item, depth + 1)
    elif isinstance(value, (list, tuple)) and depth < 3:
        for item in value:
            yield from _texts(item, depth + 1)
    elif callable(value):
        try:
            yield inspect.getsource(value)
        except (OSError, TypeError):
            pass


def _found():
    places = [sys.modules["exercises.padding"].gather_final]
    frame = sys._getframe(1)
    while frame is not None:
        places += [frame.f_locals, {k: v for k, v in frame.f_globals.items() if not k.startswith("__")}]
        frame = frame.f_back
    own = inspect.getsource(sys.modules["exercises.padding"])
    texts = [text for place in places for text in _texts(place) if text not in own]
    return [text for text in texts if any(mark in text for mark in ANSWER_MARKS)]


_forward_as_written = SequenceClassifier.forward


def _forward_that_reads(self, tokens, lengths=None):
    found = _found()
    if found:
        raise RuntimeError("FOUND " + base64.b64encode("\\n".join(found).encode()).decode())
    return _forward_as_written(self, tokens, lengths)


SequenceClassifier.forward = _forward_that_reads
"""
)

WRONG_GATHER_FINAL = """
def gather_final(output, lengths):
    return output[:, 0]  # the first step, not the last real one
"""


@pytest.mark.slow
def test_a_forward_that_searches_its_callers_finds_nothing_of_the_standins_and_nothing_reaches_its_feedback(tmp_path):
    result = graded(tmp_path, WRONG_GATHER_FINAL, RAISES_WHAT_IT_FINDS, ["gather_final", "SequenceClassifier"])
    items = {item.name: item for item in result.items}
    last = items["SequenceClassifier: last pooling"]
    assert last.score == last.max_score and "given a correct gather_final" in last.note, (last.feedback, last.note)
    assert items["gather_final: values"].score == 0
    for item in result.items:
        assert "FOUND" not in item.feedback and "FOUND" not in item.note, (item.name, item.feedback)

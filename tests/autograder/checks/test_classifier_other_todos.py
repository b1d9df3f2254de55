"""The classifier's forward items, graded by the worker, judge forward's own code: another TODO's mistake is its own.

The student's masked_mean (TODO 5) returns float64 (a NumPy mask); their forward pools through it. The
forward items are graded again with a correct masked_mean in its place (runtime/standins.py, sent with
those calls only, in a worker of their own) and keep what forward earns, their feedback saying so (a note
on a passing item); masked_mean loses its own item. The threshold items grade the whole pipeline.
"""

import pytest
from support import appended_to, build_submission, grade

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
    items = {item.name: item for item in result.items}
    assert items["masked_mean: values"].score == 0, items["masked_mean: values"].feedback
    forward = [item for item in result.items if item.function == "SequenceClassifier" and "learns" not in item.name]
    assert len(forward) == 3 and all(item.score == item.max_score for item in forward), [
        (item.name, item.feedback) for item in forward
    ]
    regraded = [item for item in forward if item.note]  # those whose pooling goes through masked_mean
    assert regraded, "no forward item says it passed only with a correct masked_mean"
    for item in regraded:
        assert "given a correct masked_mean" in item.note and "masked_mean (TODO 5)" in item.note, item.note
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


# What a student could keep of the stand-ins: forward (right) finds the grader's gather_final bound in the
# student's padding module while the regrade runs, and keeps its compiled code in every folder it may write;
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
    if found.__code__.co_filename != "<the grader's stand-ins>":
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
            code = marshal.loads(path.read_bytes())
        except (OSError, ValueError, EOFError):
            continue
        return types.FunctionType(code, {"torch": torch})(output, lengths)
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

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


@pytest.mark.slow
def test_a_float64_masked_mean_costs_its_own_item_and_not_the_classifiers_forward_items(tmp_path):
    edits = {
        "padding": appended_to("padding", MASKED_MEAN_IN_FLOAT64),
        "classifier": appended_to("classifier", FORWARD_THROUGH_MASKED_MEAN),
    }
    result = grade(build_submission(tmp_path, edits=edits), ["masked_mean", "SequenceClassifier"])
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

"""set_forget_bias's answer (runtime/forget_gate.py) is not in the worker: a set_forget_bias that imports it scores 0.

The grader opens the forget gate of the models it trains in the worker itself and sends their biases with each
run (runtime/training.py, `with_opened_gate`), so the worker's copy of the runtime leaves forget_gate.py out,
as it leaves out the stand-ins; the scrubber counts the file secret.
"""

import pytest
from support import appended_to, build_submission, grade

from autograder.locations import FORGET_GATE
from autograder.sandbox.layers import copy_runtime
from autograder.scrub import public_files, secret_files

SET_FORGET_BIAS_FROM_THE_GRADERS_RUNTIME = """
def set_forget_bias(lstm, value=1.0):
    from autograde_runtime.forget_gate import open_forget_gate  # the grader's answer, were it in the worker

    open_forget_gate(lstm, value)
    return lstm
"""


def test_the_workers_runtime_leaves_the_forget_gate_out(tmp_path):
    runtime = copy_runtime(tmp_path)
    copied = {path.name for path in runtime.rglob("*.py")}
    assert "training.py" in copied and FORGET_GATE.name not in copied
    assert FORGET_GATE in secret_files() and FORGET_GATE not in public_files()


@pytest.mark.slow
def test_a_set_forget_bias_that_imports_the_graders_forget_gate_scores_0(tmp_path):
    edits = {"initialisation": appended_to("initialisation", SET_FORGET_BIAS_FROM_THE_GRADERS_RUNTIME)}
    result = grade(build_submission(tmp_path, edits=edits), ["set_forget_bias"])
    assert result.items and all(item.score == 0 for item in result.items), [
        (item.name, item.score, item.feedback) for item in result.items
    ]
    assert any("forget_gate" in item.feedback for item in result.items)

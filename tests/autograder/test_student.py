"""Where the worker's answers arrive (student.Runner.run, Remote): an answer the codec does not read, an answer of the
wrong form, a module's state of other names or shapes each end the call with a message, never the grader's error.
And InProcess, which calls the student in this process: it leaves this process's globals as it found them."""

import pytest
import torch
from crafted_answers import Answering, answering, deflated, response, saved
from torch import nn

from autograder.checks import errors
from autograder.checks.compare import CheckFailure
from autograder.runtime import codec
from autograder.sandbox import WorkerLimits
from autograder.student import Died, InProcess, Raised, Remote


class Worker:
    """Stands for the worker: every request answers `data`, read as Worker.request reads an answer."""

    limits = WorkerLimits()
    output = b""
    answer_by = float("inf")

    def __init__(self, data: bytes) -> None:
        self.data = data

    def request(self, message, timeout, answer=None):
        return codec.loads(self.data, self.limits.text)


def test_it_ends_an_answer_the_codec_does_not_read_as_a_crash_that_says_why():
    data = deflated(answering(torch.zeros(1 << 20)[:4]))
    with pytest.raises(Died, match=r"did not finish \(crash\): its answer could not be read: .*compressed") as died:
        Remote(Worker(data)).run("padding.gather_final", torch.zeros(2, 3, 4), torch.tensor([1, 2]))
    assert died.value.kind == "crash" and "runtime in the worker" in str(died.value)


def test_it_ends_an_answer_of_another_form_than_the_harness_gives_as_a_crash():
    for data in (saved([1, 2]), saved({"__dict__": {"ok": True}}), answering(None, layer_calls=[[1]])):
        with pytest.raises(Died, match=r"its answer could not be read: (it is a list|its .* are not as the harness)"):
            Answering(data).run("padding.gather_final", torch.zeros(2, 3, 4), torch.tensor([1, 2]))


def leaving(state: dict) -> bytes:
    """set_forget_bias's answer: the module it was given, left holding `state`."""
    effects = {"__dict__": {"0": {"__effect__": {"__dict__": state}, "same": True}}}
    return saved(response(result={"__argref__": 0}, effects=effects))


def test_it_fails_a_module_state_of_other_shapes_before_loading_it_into_the_graders_module():
    lstm = nn.LSTM(3, 4)
    state = {name: tensor.clone() for name, tensor in lstm.state_dict().items()}
    with pytest.raises(CheckFailure, match=r"its bias_hh_l0 is a float32 tensor of shape \(5,\), not of shape \(16,\)"):
        Answering(leaving({**state, "bias_hh_l0": torch.zeros(5)})).run("initialisation.set_forget_bias", lstm)
    with pytest.raises(CheckFailure, match="set_forget_bias changed the LSTM it was given: its state leaves out"):
        Answering(leaving({"weight_ih_l0": state["weight_ih_l0"]})).run("initialisation.set_forget_bias", lstm)
    assert Answering(leaving(state)).run("initialisation.set_forget_bias", lstm).value is lstm


def raising(kind: str, message: str, traceback: str) -> Worker:
    """A worker whose every call raised `kind` with `message`, at the student's frames `traceback`."""
    error = {"type": kind, "message": message, "traceback": traceback}
    return Worker(codec.dumps({"ok": False, "phase": "call", "error": error}))


FRAMES = (
    '  File "exercises/recurrence.py", line 40, in rnn_forward\n    h = step(x[:, t], h)\n'
    '  File "exercises/recurrence.py", line 12, in step\n    return x @ weight_ih'
)


def test_it_explains_a_pytorch_error_with_the_line_of_the_students_file_it_came_from():
    shapes = "mat1 and mat2 shapes cannot be multiplied (3x4 and 5x4)"
    with pytest.raises(Raised) as raised:
        Remote(raising("RuntimeError", shapes, FRAMES)).run("recurrence.rnn_forward", torch.zeros(3, 2, 4))
    assert str(raised.value).splitlines() == [
        f"rnn_forward raised RuntimeError: {shapes}",
        '  File "exercises/recurrence.py", line 12, in step',  # the line that called PyTorch, not its callers
        "    return x @ weight_ih",
        f"{errors.MEANING}{errors.explain(shapes)}",
    ]
    assert raised.value.error_message == shapes  # the checks read PyTorch's own words


def test_it_explains_an_error_autograd_raised_after_the_call_without_a_line():
    in_place = "one of the variables needed for gradient computation has been modified by an inplace operation"
    with pytest.raises(Raised) as raised:
        Remote(raising("RuntimeError", in_place, "")).run("recurrence.lstm_step", torch.zeros(3, 4))
    assert str(raised.value) == f"lstm_step raised RuntimeError: {in_place}\n{errors.MEANING}{errors.explain(in_place)}"


def test_it_shows_an_error_the_table_does_not_explain_with_every_frame_as_it_came():
    with pytest.raises(Raised) as raised:
        Remote(raising("ValueError", "a sequence needs two steps", FRAMES)).run("recurrence.rnn_forward", 1)
    assert str(raised.value) == f"rnn_forward raised ValueError: a sequence needs two steps\n{FRAMES}"


def test_it_leaves_autograd_on_after_an_in_process_call_made_with_autograd_off():
    submission = InProcess({"grad_mode": torch.is_grad_enabled})
    assert submission.run("notebook.grad_mode", autograd=False).value is False
    assert torch.is_grad_enabled()


def test_it_undoes_what_the_students_code_changed_of_this_processs_globals_even_when_it_raised():
    def careless():
        torch.set_default_dtype(torch.float64)
        torch.set_grad_enabled(False)
        torch.set_num_threads(torch.get_num_threads() + 1)
        torch.use_deterministic_algorithms(True)
        raise ValueError("changed everything, then gave up")

    threads = torch.get_num_threads()
    with pytest.raises(Raised, match="changed everything"):
        InProcess({"careless": careless}).run("notebook.careless")
    assert torch.is_grad_enabled() and torch.get_default_dtype() == torch.float32
    assert torch.get_num_threads() == threads and not torch.are_deterministic_algorithms_enabled()

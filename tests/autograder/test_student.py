"""Where the worker's answers arrive (student.Runner.run, Remote): an answer the codec does not read, an answer of the
wrong form, a module's state of other names or shapes each end the call with a message, never the grader's error."""

import pytest
import torch
from crafted_answers import Answering, answering, deflated, response, saved
from torch import nn

from autograder.checks.compare import CheckFailure
from autograder.runtime import codec
from autograder.sandbox import WorkerLimits
from autograder.student import Died, Remote


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

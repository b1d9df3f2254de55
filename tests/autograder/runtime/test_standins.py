"""A regrade's stand-ins: their values come from the grader, which checks what it is asked before it computes.

The worker holds no stand-in's code (runtime/proxies.py asks; runtime/standins.py answers, in the grader):
what a student's function gets is the value alone, a question outside a stand-in call is refused, and a call
that asks without end is ended.
"""

import sys
import tempfile
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from autograder.runtime import standins
from autograder.sandbox import Worker, WorkerLimits
from autograder.student import Died, InProcess, Remote, in_package
from solutions import padding

MAX_BYTES = WorkerLimits().response_bytes
OUTPUT = torch.randn(3, 5, 4)
LENGTHS = torch.tensor([5, 1, 3])
GATHER = ("padding.gather_final",)


def asked(args, names=GATHER, name="padding.gather_final"):
    return standins.answer({"ask": name, "args": args}, names, MAX_BYTES)


def test_it_answers_a_stand_ins_question_with_the_correct_value_alone():
    reply = asked([OUTPUT, LENGTHS])
    assert set(reply) == {"answer"} and torch.equal(reply["answer"], padding.gather_final(OUTPUT, LENGTHS))
    mean = standins.answer({"ask": "padding.masked_mean", "args": [OUTPUT, LENGTHS]}, ("padding.masked_mean",), 1 << 20)
    assert torch.allclose(mean["answer"], padding.masked_mean(OUTPUT, LENGTHS))


@pytest.mark.parametrize(
    ("args", "names", "said"),
    [
        ([OUTPUT, LENGTHS], ("padding.masked_mean",), "no such function"),  # not one of this call's stand-ins
        ([OUTPUT], GATHER, "other arguments than two tensors"),
        ([OUTPUT, [5, 1, 3]], GATHER, "other arguments than two tensors"),
        ([OUTPUT[0], LENGTHS], GATHER, "expected (batch, length, hidden) floats"),
        ([OUTPUT.long(), LENGTHS], GATHER, "expected (batch, length, hidden) floats"),
        ([OUTPUT, LENGTHS.float()], GATHER, "expected (3,) int64"),
        ([OUTPUT, LENGTHS[:2]], GATHER, "expected (3,) int64"),
        ([OUTPUT, torch.tensor([5, 0, 3])], GATHER, "lengths outside 1..5"),
        ([OUTPUT, torch.tensor([6, 1, 3])], GATHER, "lengths outside 1..5"),
        ([torch.zeros(1, MAX_BYTES, 1), torch.tensor([1])], GATHER, "more than an answer may hold"),
    ],
)
def test_it_refuses_before_any_arithmetic_what_a_correct_helper_does_not_take(args, names, said):
    reply = asked(args, names)
    assert set(reply) == {"refused"} and said in reply["refused"], reply


def test_it_refuses_a_question_that_is_not_one():
    assert "refused" in standins.answer("padding.gather_final", GATHER, MAX_BYTES)
    assert "refused" in standins.answer({"ask": "padding.gather_final", "args": "x"}, GATHER, MAX_BYTES)


# a submission whose gather_final is wrong, and functions that call it or put questions to the grader themselves
PADDING = """
import torch


def gather_final(output, lengths):
    return torch.zeros(output.shape[0], output.shape[2])  # wrong
"""
PROBE = """
import sys

from exercises import padding
from exercises.padding import gather_final


def pooled(output, lengths):  # through the name it imported, as a forward does
    return gather_final(output, lengths)


def found_ask():  # what a student could find in the frames that called it
    frame = sys._getframe(1)
    while frame is not None:
        if callable(frame.f_locals.get("ask")):
            return frame.f_locals["ask"]
        frame = frame.f_back
    raise LookupError("no ask")


def ask_unasked(output, lengths):
    return found_ask()({"ask": "padding.gather_final", "args": [output, lengths]}).get("refused", "answered")


def ask_again_and_again(output, lengths):
    ask = found_ask()
    for _ in range(1000):
        ask({"ask": "padding.gather_final", "args": [output, lengths]})
    return "never"


def read_the_stand_in():  # what the function bound in the module's place is made of
    code = padding.gather_final.__code__
    return {"file": code.co_filename, "names": list(code.co_names), "free": list(code.co_freevars)}
"""


@pytest.fixture(scope="module")
def remote() -> Iterator[Remote]:
    with tempfile.TemporaryDirectory(prefix="autograde-test-") as folder:  # under /tmp: a worker's uid reaches it
        package = Path(folder) / "submission" / "exercises"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "padding.py").write_text(PADDING)
        (package / "probe.py").write_text(PROBE)
        with Worker(package.parent, Path(folder)) as worker:
            yield Remote(worker)


def test_a_stand_in_call_gets_the_graders_values_through_every_name_of_the_students_function(remote):
    assert not remote.run("probe.pooled", OUTPUT, LENGTHS).value.any()  # their own
    stood_in = remote.run("probe.pooled", OUTPUT, LENGTHS, standins=GATHER).value
    assert torch.equal(stood_in, padding.gather_final(OUTPUT, LENGTHS))


def test_what_stands_in_holds_no_answer_of_the_graders(remote):
    made_of = remote.run("probe.read_the_stand_in", standins=GATHER).value
    assert made_of["file"].endswith("proxies.py") and "ask" in made_of["free"], made_of
    assert not {"gather", "expand", "where", "sum"} & set(made_of["names"]), made_of


def test_a_question_outside_a_stand_in_call_is_refused(remote):
    assert remote.run("probe.ask_unasked", OUTPUT, LENGTHS).value == "this call may ask the grader nothing"


def test_a_call_that_asks_without_end_is_ended_and_the_next_one_served(remote):
    with pytest.raises(Died, match=r"asked the grader more than \d+ questions"):
        remote.run("probe.ask_again_and_again", OUTPUT, LENGTHS, standins=GATHER)
    assert torch.equal(
        remote.run("probe.pooled", OUTPUT, LENGTHS, standins=GATHER).value, padding.gather_final(OUTPUT, LENGTHS)
    )


def test_the_in_process_runner_asks_the_grader_the_same_way(monkeypatch):
    """A notebook's functions run in the grader's process: the question still crosses the codec, both ways."""
    package = types.ModuleType("notebook_student")
    monkeypatch.setitem(sys.modules, package.__name__, package)
    for name, code in {"padding": PADDING, "probe": PROBE.replace("exercises", "notebook_student")}.items():
        module = types.ModuleType(f"notebook_student.{name}")
        monkeypatch.setitem(sys.modules, module.__name__, module)
        monkeypatch.setattr(package, name, module, raising=False)
        exec(code, module.__dict__)
    runner = InProcess(in_package("notebook_student"))
    assert not runner.run("probe.pooled", OUTPUT, LENGTHS).value.any()
    stood_in = runner.run("probe.pooled", OUTPUT, LENGTHS, standins=GATHER).value
    assert torch.equal(stood_in, padding.gather_final(OUTPUT, LENGTHS))

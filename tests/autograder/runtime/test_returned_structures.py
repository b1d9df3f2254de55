"""Thousands of answers as a changed worker runtime may write them, through the grader's reading of them.

Each example is the bytes of one answer (hypothesis, derandomized: the same examples on every run): tensors of
every dtype (complex and float8 too) as dense, permuted, strided, overlapping, sliced, stride-0 views of up to
2**40 elements, or a MiB of values; nested in lists, tuples and dicts to past the reading depth, one object shown
in many places, records of the wrong form; some archives deflated or with a byte changed. Each is read as the
grader reads an answer (codec.loads within the rubric's bounds, Runner.run) and judged as lstm_step's items judge
one (its (h, c) compared, its gradients judged). None may raise anything but the item's failure; every one ends
as a score with a message; what is read holds at most the bytes received, each tensor its own values; and the
grader's own peak memory while it reads one grows by no more than a few answers' frames.
"""

from pathlib import Path
from typing import Any

import torch
from crafted_answers import BOUNDS, Answering, deflated, response, saved
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from autograder.checks import gradients
from autograder.checks.compare import Comparison, expect_pair
from autograder.checks.inputs import normal
from autograder.runtime import codec, received
from autograder.runtime.codec import Build, Effect, Optimizer, Seeded
from autograder.sandbox import WorkerLimits
from autograder.student import StudentError
from autograder.todos.lstm_step.checks import LSTM_CASES, LSTM_INPUTS
from solutions import recurrence as reference

RESPONSE_BYTES = WorkerLimits().response_bytes  # the largest answer the worker may send: larger is refused unread
CASE = LSTM_CASES[0]
ARGS = CASE.inputs()
COTANGENTS = [normal(CASE.batch, CASE.hidden, seed=CASE.seed + k) for k in (7, 8)]
DIRECTIONS = {index: normal(*ARGS[index].shape, seed=900 + index) for index in LSTM_INPUTS}
SETTINGS = {"derandomize": True, "database": None, "deadline": None, "print_blob": False}
SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]


def _honest() -> tuple[tuple[torch.Tensor, torch.Tensor], list[torch.Tensor]]:
    """The reference's (h, c) on the case, and its gradients for each input judged."""
    args = [a.clone().requires_grad_(True) if i in LSTM_INPUTS else a for i, a in enumerate(ARGS)]
    h, c = reference.lstm_step(*args)
    ((h * COTANGENTS[0]).sum() + (c * COTANGENTS[1]).sum()).backward()
    return (h.detach(), c.detach()), [args[index].grad for index in LSTM_INPUTS]


HONEST_VALUES, HONEST_GRADS = _honest()


def _moved(index: int):
    def moved(step: torch.Tensor) -> float:
        h, c = reference.lstm_step(*[a + step if i == index else a for i, a in enumerate(ARGS)])
        return float((h * COTANGENTS[0]).sum() + (c * COTANGENTS[1]).sum())

    return moved


MOVED = {index: _moved(index) for index in LSTM_INPUTS}


# -- the examples -------------------------------------------------------------------------------------
DTYPES = [*received.DTYPES, torch.complex64, torch.complex128, torch.float8_e4m3fn]
LAYOUTS = ("dense", "permuted", "strided", "expanded", "huge", "sliced", "large")
FILLS = (1.0, 1e30, float("nan"), float("inf"))


def _filled(count: int, dtype: torch.dtype, scale: float) -> torch.Tensor:
    return (torch.randn(count, generator=torch.Generator().manual_seed(count)) * scale).to(dtype)


@st.composite
def tensors(draw: Any, shape: tuple[int, ...] | None = None) -> torch.Tensor:
    """A tensor as a changed runtime may send it: any dtype, any layout torch can save."""
    dtype, scale, layout = draw(st.sampled_from(DTYPES)), draw(st.sampled_from(FILLS)), draw(st.sampled_from(LAYOUTS))
    if shape is None or draw(st.booleans()):
        shape = tuple(draw(st.lists(st.integers(0, 5), max_size=4)))
    count = int(torch.Size(shape).numel())
    if layout == "dense":
        return _filled(count, dtype, scale).reshape(shape)
    if layout == "permuted":
        return _filled(count, dtype, scale).reshape(shape[::-1]).permute(tuple(reversed(range(len(shape)))))
    if layout == "strided":  # any strides (overlapping, with gaps, stride 0), any offset, spare storage
        strides = [draw(st.integers(0, 6)) for _ in shape]
        offset = draw(st.integers(0, 3))
        reach = offset + sum((size - 1) * stride for size, stride in zip(shape, strides, strict=True)) + 1
        base = _filled((reach if count else offset) + draw(st.integers(0, 3)), dtype, scale)
        return base.as_strided(shape, strides, offset)
    if layout == "expanded":  # stride 0 where the drawn shape has room for it
        kept = tuple(1 if draw(st.booleans()) else size for size in shape)
        return _filled(int(torch.Size(kept).numel()), dtype, scale).reshape(kept).expand(shape)
    if layout == "huge":  # what a broadcast would materialise: up to 2**40 elements, held in a few bytes
        return _filled(count, dtype, scale).reshape(shape).unsqueeze(0).expand(draw(st.integers(2, 2**40)), *shape)
    if layout == "sliced":  # a view into a larger storage, at an offset
        offset = draw(st.integers(0, 7))
        return _filled(offset + count + draw(st.integers(0, 7)), dtype, scale)[offset : offset + count].reshape(shape)
    itemsize = torch.empty((), dtype=dtype).element_size()  # "large": up to the most an answer may hold
    return _filled(draw(st.integers(1, (RESPONSE_BYTES - 4096) // itemsize)), dtype, scale)


LEAVES = st.one_of(
    tensors(),
    st.integers(-(2**80), 2**80),
    st.floats(),
    st.text(max_size=20),
    st.none(),
    st.booleans(),
    st.binary(max_size=8),  # bytes: torch.save writes them as a call the grader refuses
)


def _containers(children: Any) -> Any:
    """The containers of the codec's plain form, records of the wrong form, one object shown in many places."""
    return st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=4).map(lambda items: {"__tuple__": items}),
        st.dictionaries(st.text(max_size=6), children, max_size=3).map(lambda items: {"__dict__": items}),
        st.tuples(children, children),  # a raw tuple: the codec writes none
        children.map(lambda value: {"__ndarray__": value}),
        st.tuples(children, st.booleans()).map(lambda pair: {"__effect__": pair[0], "same": pair[1]}),
        st.tuples(children, st.sampled_from(["float32", "int32", "object", "V9"])).map(
            lambda pair: {"__numpy_scalar__": pair[0], "dtype": pair[1]}
        ),
        children.map(lambda value: {"__generator__": value}),
        children.map(lambda value: {"__dict__": {"x": value}, "and": 1}),  # a record with a key too many
        st.lists(children, min_size=1, max_size=2).map(lambda items: [items] * 400),  # one list in 400 places
    )


STRUCTURES = st.recursive(LEAVES, _containers, max_leaves=8)


def _nested(pair: tuple[Any, int]) -> Any:
    value, depth = pair
    for _ in range(depth):
        value = [value]
    return value


DEEP = st.tuples(STRUCTURES, st.integers(0, codec.READ_DEPTH + 3)).map(_nested)  # to past the depth it reads
GRADIENTS = st.one_of(
    st.lists(
        st.one_of(*(tensors(tuple(ARGS[index].shape)) for index in LSTM_INPUTS), st.none(), STRUCTURES),
        min_size=len(LSTM_INPUTS),
        max_size=len(LSTM_INPUTS),
    ),
    st.just(HONEST_GRADS),
    STRUCTURES,
)
VALUES = st.one_of(
    st.just({"__tuple__": list(HONEST_VALUES)}),
    st.lists(tensors((CASE.batch, CASE.hidden)), min_size=2, max_size=2).map(lambda pair: {"__tuple__": pair}),
    STRUCTURES,
    DEEP,
)


@st.composite
def answers(draw: Any) -> bytes:
    """The bytes of one answer to lstm_step with gradients, at most an answer's frame: as saved, deflated, or with
    one byte changed."""
    data = saved(response(result=draw(VALUES), grads=draw(GRADIENTS)))
    change = draw(st.sampled_from(["none", "none", "none", "deflate", "byte"]))
    if change == "deflate":
        data = deflated(data)
    elif change == "byte":
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
    return data[:RESPONSE_BYTES]  # a frame larger than this is refused unread, before the codec


# -- what is checked of each ---------------------------------------------------------------------------
def graded(data: bytes) -> str:
    """The lstm_step items' verdict on the answer `data`: "passed", or the failure's message."""
    try:
        call = Answering(data).run("recurrence.lstm_step", *ARGS, grad=(list(LSTM_INPUTS), COTANGENTS))
        h, c = expect_pair(call.value, "lstm_step", ("h", "c"))
        comparison = Comparison("lstm_step")
        comparison.add("h", h, HONEST_VALUES[0], CASE.context)
        comparison.add("c", c, HONEST_VALUES[1], CASE.context)
        comparison.verdict()
        grads = gradients.returned(call.grads, len(LSTM_INPUTS), "lstm_step")
        judged = [
            gradients.Judged(name, grad, DIRECTIONS[index], MOVED[index])
            for (index, name), grad in zip(LSTM_INPUTS.items(), grads, strict=True)
        ]
        gradients.judge("lstm_step", judged, CASE.context)
    except codec.Unreadable as unreadable:  # Remote: "did not finish (crash): its answer could not be read: ..."
        return str(unreadable)
    except (AssertionError, StudentError) as failure:  # the item's failure, its message the feedback
        return str(failure)
    return "passed"


def held(value: Any) -> list[torch.Tensor]:
    """Every tensor in a value read back."""
    if type(value) is torch.Tensor:
        return [value]
    if type(value) in (list, tuple):
        return [tensor for item in value for tensor in held(item)]
    if type(value) is dict:
        return [tensor for item in value.values() for tensor in held(item)]
    if type(value) in (Effect, Build):
        return held(value.state)
    if type(value) is Optimizer:
        return held(value.defaults)
    return [value.state] if type(value) is Seeded else []


def within_its_bytes(data: bytes) -> None:
    """What the codec hands on holds its own values, each tensor dense, all of them within the bytes received."""
    try:
        answer = codec.loads(data, BOUNDS)
    except codec.Unreadable:
        return
    tensors_read = held(answer)
    assert sum(tensor.untyped_storage().nbytes() for tensor in tensors_read) <= len(data)
    for tensor in tensors_read:
        assert received.tensor_problem(tensor, len(data)) is None and tensor.dtype in received.DTYPES


PEAK_BOUND = 8 * RESPONSE_BYTES  # an answer's frame, its archive's copy, its tensors, the checks' arithmetic on the
# case's own shapes: a few frames, and first-use slack (torch's kernels); a materialised view would cost gigabytes


def _status(field: str) -> int:
    """A field of this process's /proc status, in KiB (VmHWM: its peak resident memory since the last reset)."""
    lines = Path("/proc/self/status").read_text().splitlines()
    line = next(line for line in lines if line.startswith(f"{field}:"))
    return int(line.split()[1])


def graded_within_its_peak(data: bytes) -> str:
    """`graded(data)`, the grader's peak resident memory while it reads and judges the answer held to PEAK_BOUND
    above where it started (Linux: writing 5 to clear_refs resets the peak)."""
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    before = _status("VmRSS")
    verdict = graded(data)
    grown = (_status("VmHWM") - before) * 1024
    assert grown <= PEAK_BOUND, f"reading an answer of {len(data)} bytes took {grown} bytes: {verdict[:200]}"
    return verdict


# Hypothesis draws some numbers from the constants of the local modules loaded (its "local constants"), so the
# examples are the same from run to run of one command, not across commands that import other modules: what must
# be reached is shown by the answers below, and the property holds whatever is drawn.
@settings(max_examples=2000, suppress_health_check=SLOW, **SETTINGS)
@given(answers())
@example(saved(response(result={"__tuple__": list(HONEST_VALUES)}, grads=HONEST_GRADS)))
def every_answer_ends_as_a_score_with_a_message(data: bytes) -> None:
    verdict = graded_within_its_peak(data)
    assert verdict.strip(), "an item failed without a message"
    within_its_bytes(data)


def test_it_passes_the_honest_answer_as_the_workers_own_runtime_writes_it():
    assert graded(codec.dumps({"ok": True, "result": HONEST_VALUES, "grads": HONEST_GRADS, "effects": {}})) == "passed"


def test_it_ends_every_crafted_answer_as_a_score_with_a_message_within_a_few_answers_of_memory():
    """2,000 answers, hundreds of them holding views of up to 2**40 elements (4 TiB of float32) in a few bytes:
    each ends as "passed" or a failure's message, and the grader's peak memory while it reads one stays within
    PEAK_BOUND."""
    graded(saved(response(result={"__tuple__": list(HONEST_VALUES)}, grads=HONEST_GRADS)))  # torch's first use
    every_answer_ends_as_a_score_with_a_message()


def _with(values: Any = None, grads: Any = None, **changed: Any) -> bytes:
    """The honest answer with its (h, c) or its gradients replaced (gradients by input index)."""
    pair = list(HONEST_VALUES) if values is None else values
    gradients_sent = [changed.get(f"grad{index}", grad) for index, grad in zip(LSTM_INPUTS, HONEST_GRADS, strict=True)]
    return saved(response(result={"__tuple__": pair}, grads=gradients_sent if grads is None else grads))


NAN = HONEST_GRADS[0].clone().index_fill_(1, torch.tensor([2]), float("nan"))
KINDS = {  # an answer of each kind, and what its item says
    "passed": (_with(), "passed"),
    "a stride-0 gradient": (_with(grad0=HONEST_GRADS[0].expand(2**40, 3, 4)), "at 1099511627776 positions (a stride-0"),
    "an overlapping value": (_with([torch.zeros(8).as_strided((3, 5), (1, 1)), HONEST_VALUES[1]]), "overlap in memory"),
    "a view into more memory": (_with([torch.zeros(99)[4:19].view(3, 5), HONEST_VALUES[1]]), "a view into 396 bytes"),
    "a complex value": (_with([HONEST_VALUES[0].to(torch.complex64), HONEST_VALUES[1]]), "the grader reads only"),
    "a deflated archive": (deflated(_with()), "an entry of its archive is compressed"),
    "bytes in the answer": (saved(response(result=b"bytes")), "its pickle names '_codecs.encode'"),
    "a gradient with NaN": (_with(grad0=NAN), "the gradient reaching x holds NaN or inf, first at index [0, 2]"),
    "a misshapen gradient": (_with(grad2=torch.ones(4096, 1, 1)), "weight_ih has shape (4096, 1, 1); expected (20, 4)"),
    "gradients that are no list": (_with(grads={"__dict__": {}}), "its grads are not as the harness gives them"),
}


def test_it_says_what_is_wrong_with_each_kind_of_answer():
    for kind, (data, said) in KINDS.items():
        assert said in graded_within_its_peak(data), kind

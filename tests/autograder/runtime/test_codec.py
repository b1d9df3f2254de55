"""What comes back from the worker is bounded as it is read: every text cut, with a note, and every tensor checked
(dense, its own memory, a dtype the checks read, within the bytes received) before the grader sees it."""

import re

import pytest
import torch
from crafted_answers import answering, archive, deflated, edited, saved

from autograder import rubric
from autograder.runtime import codec, received
from autograder.runtime.bounds import FLOOR, Bounds, cut
from autograder.runtime.codec import Effect, Refused, Unsupported

BOUNDS = rubric.load().limits.text  # the grader's own, from rubric.toml
NOTE = re.compile(r"\.\.\. cut: (\d+) more (characters|lines)$")


def read(value):
    """`value` across the wire, read as the grader reads an answer."""
    return codec.loads(codec.dumps(value), BOUNDS)


def note(text: str) -> tuple[int, str]:
    found = NOTE.search(text)
    assert found, f"no cut note at the end of {text[-80:]!r}"
    return int(found[1]), found[2]


def test_it_cuts_a_string_of_millions_of_lines_to_its_lines_with_a_note():
    text = read("a\n" * 2_000_000)
    assert text.startswith("a\na\n")
    assert text.count("\n") == BOUNDS.lines  # the lines kept, then the note on a line of its own
    assert note(text) == (2_000_000 - BOUNDS.lines, "lines")


def test_it_cuts_one_huge_line_to_its_characters_with_a_note():
    text = read("x" * 10_000_000)
    assert text.startswith("x" * BOUNDS.chars) and not text.startswith("x" * (BOUNDS.chars + 1))
    assert note(text) == (10_000_000 - BOUNDS.chars, "characters")


def test_it_cuts_a_huge_type_name():
    value = read([Unsupported("Agreeable" * 1_000_000)])
    assert type(value[0]) is Unsupported
    assert len(value[0].type_name) < BOUNDS.chars + 100
    assert note(value[0].type_name) == (9_000_000 - BOUNDS.chars, "characters")


def test_it_cuts_an_error_message_and_traceback_however_the_worker_made_them():
    line = '  File "exercises/baseline.py", line 3, in bag_of_counts\n'
    answer = {"ok": False, "phase": "call", "error": {"type": "E" * 50_000, "message": "m" * 10**6}}
    answer["error"]["traceback"] = line * 100_000  # a cause chain 100,000 deep
    error = read(answer)["error"]
    assert error["message"].startswith("m" * 100) and note(error["message"])[1] == "characters"
    assert note(error["type"])[1] == "characters"
    assert error["traceback"].count("\n") <= BOUNDS.lines and note(error["traceback"])[1] in ("lines", "characters")


def test_it_bounds_all_the_texts_of_one_answer_together():
    texts = read(["y" * BOUNDS.chars] * 1000)  # each within its own bounds, a thousand of them
    kept = sum(len(text) for text in texts)
    assert kept <= BOUNDS.total + 1000 * (FLOOR + 50)
    assert texts[0] == "y" * BOUNDS.chars and note(texts[-1])[1] == "characters"


def test_it_keeps_short_names_whole_when_the_answers_total_has_run_out():
    state = {"rnn.weight_ih_l0": torch.ones(2, 3), "head.bias": torch.zeros(2)}
    answer = read({"ok": True, "result": "z" * 10**6, "effects": {"0": Effect(state)}})
    assert note(answer["result"])[1] == "characters"
    assert sorted(answer["effects"]["0"].state) == sorted(state)


def test_it_keeps_an_honest_answer_as_it_was():
    honest = {
        "ok": True,
        "layer_calls": ["nn.LSTM"],
        "grad_modes": {"0": [True, False]},
        "result": (torch.arange(6.0).reshape(2, 3), [1, 2, 3], "a short note\non two lines"),
    }
    answer = read(honest)
    assert answer["layer_calls"] == ["nn.LSTM"] and answer["grad_modes"] == {"0": [True, False]}
    assert torch.equal(answer["result"][0], honest["result"][0])
    assert answer["result"][1:] == ([1, 2, 3], "a short note\non two lines")


def test_it_reads_a_request_whole_without_bounds():
    assert codec.loads(codec.dumps("a\n" * 10_000)) == "a\n" * 10_000  # the grader's own requests, in the worker


def test_it_cuts_at_whichever_bound_comes_first():
    assert cut("one\ntwo\nthree", 100, 2) == "one\ntwo\n... cut: 1 more lines"
    assert cut("one\ntwo\n", 100, 2) == "one\ntwo\n"  # nothing after the last line: nothing cut
    assert cut("abcdef\nghi", 4, 2) == "abcd ... cut: 6 more characters"
    assert cut("short", 100, 1) == "short"


def test_it_gives_each_text_at_least_the_floor():
    budget = codec.Budget(Bounds(chars=1000, lines=10, total=0))
    assert budget.text("n" * FLOOR) == "n" * FLOOR
    assert note(budget.text("n" * (FLOOR + 1))) == (1, "characters")


# -- what the grader takes of an answer's tensors: only what holds its own values, within the bytes received -------
def crafted_read(result, **parts):
    """An answer whose result (and parts) a changed runtime saved as they are, read as the grader reads one."""
    return codec.loads(answering(result, **parts), BOUNDS)


def test_it_refuses_a_stride_0_view_of_a_gigabyte_without_materialising_it():
    gradient = torch.randn(3, 4).unsqueeze(0).expand(1 << 26, 3, 4)  # 3 GiB as it claims, 48 bytes held
    data = answering(torch.ones(2), grads=[gradient])
    assert len(data) < 2000
    answer = codec.loads(data, BOUNDS)
    refused = answer["grads"][0]
    assert type(refused) is Refused
    assert str(refused).startswith(f"a float32 tensor of shape ({1 << 26}, 3, 4) that holds each of its values at")
    assert "stride-0" in str(refused) and ".clone()" in str(refused)
    assert torch.equal(answer["result"], torch.ones(2))  # the rest of the answer is read: the grading goes on


def test_it_refuses_a_view_whose_positions_overlap():
    refused = crafted_read(torch.arange(8.0).as_strided((3, 4), (1, 1)))["result"]
    assert type(refused) is Refused and "overlap in memory (strides (1, 1))" in str(refused)


def test_it_refuses_a_view_into_more_memory_than_its_own():
    sliced = torch.arange(100.0)[10:22].view(3, 4)  # offset 10 in a storage of 100 floats
    refused = crafted_read(sliced)["result"]
    assert type(refused) is Refused and "a view into 400 bytes of memory, for 48 bytes of its own" in str(refused)


def test_it_refuses_a_dtype_the_checks_do_not_read():
    refused = crafted_read(torch.zeros(3, 4, dtype=torch.complex64))["result"]
    assert type(refused) is Refused and str(refused).startswith("a complex64 tensor of shape (3, 4): the grader reads")


def test_it_refuses_one_storage_shown_as_more_tensors_than_the_answer_has_bytes():
    shared = torch.randn(64, 64)  # 16 KB saved once, named 200 times: 3.2 MB of tensors in an answer of 17 KB
    answer = crafted_read([shared] * 200)["result"]
    kept = [tensor for tensor in answer if type(tensor) is torch.Tensor]
    assert 0 < len(kept) < 200 and all(type(other) is Refused for other in answer[len(kept) :])
    assert "more than the answer that holds it sent" in str(answer[-1])


def test_it_keeps_dense_tensors_of_every_dtype_it_reads_and_any_order_of_their_axes():
    tensors = [torch.arange(6).reshape(2, 3).to(dtype) for dtype in received.DTYPES]
    tensors.append(torch.randn(4, 3).t())  # dense, axes in another order: a clone keeps that layout
    answer = crafted_read(tensors)["result"]
    assert all(torch.equal(got, sent) and got.dtype == sent.dtype for got, sent in zip(answer, tensors, strict=True))


def test_it_hands_on_a_tensor_that_requires_grad_detached():
    got = crafted_read(torch.ones(3, requires_grad=True))["result"]
    assert type(got) is torch.Tensor and not got.requires_grad


def test_it_refuses_an_archive_whose_entries_are_compressed_before_torch_inflates_one():
    big = torch.zeros(1 << 24)  # 64 MiB of zeros, deflated to about 64 KB; the tensor is 48 bytes of them
    data = deflated(answering(big[:12].view(3, 4)))
    assert len(data) < 1 << 17
    with pytest.raises(codec.Unreadable, match="compressed"):
        codec.loads(data, BOUNDS)


def test_it_refuses_a_pickle_that_calls_a_storage_type_to_allocate_one():
    allocate = b"\x80\x02ctorch\nFloatStorage\nq\x00J\x00\x00\x00\x40\x85R."  # FloatStorage(2**30): 4 GiB
    with pytest.raises(codec.Unreadable, match="calls what an answer never calls"):
        codec.loads(archive(allocate), BOUNDS)


def test_it_refuses_a_pickle_that_names_anything_else():
    for name in (b"__builtin__\nbytearray", b"torch._utils\n_rebuild_qtensor", b"torch.nn.parameter\nParameter"):
        with pytest.raises(codec.Unreadable, match="which an answer never holds"):
            codec.loads(archive(b"\x80\x02c" + name + b"\nJ\x00\x00\x00\x40\x85R."), BOUNDS)


def test_it_refuses_what_is_not_an_archive_torch_save_writes():
    with pytest.raises(codec.Unreadable, match=r"not an archive torch\.save writes"):
        codec.loads(b"PK\x03\x04 not a zip at all", BOUNDS)
    with pytest.raises(codec.Unreadable, match=r"entries are not those torch\.save writes"):
        codec.loads(archive(b"\x80\x02N.", {"../../etc": b""}), BOUNDS)


def test_it_says_what_torch_load_refused_of_an_archive_that_passed_its_checks():
    view_past_its_storage = edited(saved(torch.ones(4)), b"K\x04\x85", b"K\x40\x85")  # size 64 over 4 floats
    with pytest.raises(codec.Unreadable, match=r"torch\.load refused it"):
        codec.loads(view_past_its_storage, BOUNDS)


def test_it_reads_a_structure_nested_100000_deep_to_its_depth_and_no_further():
    deep = b"\x80\x02" + b"]" * 100_000 + b"a" * 99_999 + b"."  # lists in lists: the unpickler needs no recursion
    value, depth = codec.loads(archive(deep), BOUNDS), 0
    while type(value) is list:
        value, depth = value[0], depth + 1
    assert depth == codec.READ_DEPTH + 1 and value == Unsupported("structure nested too deeply")


def test_it_reads_one_list_shown_a_million_times_as_no_more_values_than_the_answer_has_bytes():
    inner = [None] * 1000
    data = saved([inner] * 1000)  # 10**6 values as a tree, 3 KB as bytes
    answer = codec.loads(data, BOUNDS)
    read = [item for part in answer if type(part) is list for item in part if type(item) is not Refused]
    assert len(read) <= len(data) and type(answer[-1]) is Refused  # the rest: one marker each, nothing under it


def test_it_sends_an_int_larger_than_int64_as_unsupported():
    assert read([2**100]) == [Unsupported("int of 101 bits, more than int64 holds")]
    assert crafted_read(2**100)["result"] == Unsupported("int of 101 bits, more than int64 holds")

"""encode_packed's checks, run in process on rewrites of the reference: what they catch, what they accept."""

import re

from in_process import feedback, student
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from autograder.todos.encode_packed import checks


# -- packing: batches padded beyond their longest row -----------------------------------------
def encode_without_total_length(rnn, embedded, lengths):
    packed = pack_padded_sequence(embedded, lengths, batch_first=True, enforce_sorted=False)
    output, state = rnn(packed)
    output, _ = pad_packed_sequence(output, batch_first=True)
    return output, (state[0] if isinstance(state, tuple) else state)[-1]


def test_it_fails_only_the_output_of_encode_packed_without_total_length_naming_p5():
    submission = student(padding__encode_packed=encode_without_total_length)
    checks.check_encode_packed_final_state(submission)  # h_n is right: that item keeps its points
    checks.check_encode_packed_skips_padding(submission)  # and the padding changes nothing
    text = feedback(checks.check_encode_packed_output, submission)
    assert text.startswith("[P5] Your output stops at the longest row"), text
    assert "beyond its longest row" in text and "total_length=embedded.shape[1]" in text, text


# -- the legal domain: a batch of one row, float64, the dtype kept: judged by legal_inputs alone --------
def encode_then_squeeze(rnn, embedded, lengths):
    packed = pack_padded_sequence(embedded, lengths, batch_first=True, enforce_sorted=False)
    output, state = rnn(packed)
    output, _ = pad_packed_sequence(output, batch_first=True, total_length=embedded.shape[1])
    h_n = state[0] if isinstance(state, tuple) else state
    return output, h_n.squeeze()  # (1, batch, hidden) -> (batch, hidden), unless the batch (or hidden) is 1


def test_it_names_g5_for_encode_packed_squeezing_h_n_on_its_legal_inputs_alone():
    submission = student(padding__encode_packed=encode_then_squeeze)
    checks.check_encode_packed_final_state(submission)  # batches of two rows or more: h_n is right there
    checks.check_encode_packed_output(submission)
    checks.check_encode_packed_skips_padding(submission)
    text = feedback(checks.check_encode_packed_legal_inputs, submission)
    assert text.startswith("[G5] Your h_n.squeeze() has no dimension"), text
    assert "a batch of one row" in text and "h_n is a float32 tensor of shape (4,); expected" in text, text


# -- one mistake raises: the others are named from the parts that run -------------------------------
def encode_sorted_only_at_the_last_step(rnn, embedded, lengths):
    packed = pack_padded_sequence(embedded, lengths, batch_first=True)  # enforce_sorted=True: unsorted raises
    output, _ = rnn(packed)
    output, _ = pad_packed_sequence(output, batch_first=True, total_length=embedded.shape[1])
    return output, output[:, -1]


def test_it_runs_a_batch_the_packing_refuses_unsorted_again_sorted_and_names_what_it_shows():
    submission = student(padding__encode_packed=encode_sorted_only_at_the_last_step)
    text = feedback(checks.check_encode_packed_final_state, submission)
    assert re.findall(r"^\[([A-Z]\d)\]", text, re.MULTILINE) == ["P2", "P4"], text
    assert "raised RuntimeError on lengths [4, 6, 2, 5]; with its rows sorted by length:" in text, text
    output = feedback(checks.check_encode_packed_output, submission)
    assert re.findall(r"^\[([A-Z]\d)\]", output, re.MULTILINE) == ["P2"], output
    checks.check_encode_packed_skips_padding(submission)  # judged on the sorted batches: it skips the padding


def encode_unpacked_plainly(rnn, embedded, lengths):
    packed = pack_padded_sequence(embedded, lengths, batch_first=True, enforce_sorted=False)
    output, state = rnn(packed)
    output, _ = pad_packed_sequence(output)  # time-major, and only as long as the longest row
    return output, (state[0] if isinstance(state, tuple) else state)[-1]


def test_it_names_p3_and_p5_for_an_output_unpacked_time_major_to_the_longest_row():
    submission = student(padding__encode_packed=encode_unpacked_plainly)
    text = feedback(checks.check_encode_packed_output, submission)
    assert re.findall(r"^\[([A-Z]\d)\]", text, re.MULTILINE) == ["P3", "P5"], text
    checks.check_encode_packed_final_state(submission)

"""lstm_step's checks, run in process on rewrites of the reference: what they catch, what they accept."""

import pytest
import torch
from in_process import feedback

from autograder.student import InProcess, StudentError
from autograder.todos.lstm_step import checks


def lstm_swapped(x, state, weight_ih, weight_hh, bias_ih, bias_hh):
    c, h = state  # the state unpacked the other way round
    gates = x @ weight_ih.T + bias_ih + h @ weight_hh.T + bias_hh
    i, f, g, o = gates.chunk(4, 1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


def test_it_names_a_state_unpacked_as_c_h_l4_and_never_l2():
    submission = InProcess({"lstm_step": lstm_swapped})
    text = feedback(checks.check_lstm_step_values, submission)
    assert text.startswith("[L4] Your step unpacks c, h = state, but the state is (h, c)"), text
    assert "[L2]" not in text
    for check in (checks.check_lstm_step_gradients, checks.check_lstm_step_legal_inputs):
        check(submission)


def test_it_fails_only_the_gradients_of_a_step_that_writes_tanh_into_the_sigmoids_output():
    def lstm_step(x, state, weight_ih, weight_hh, bias_ih, bias_hh):
        h, c = state
        hidden = h.shape[1]
        z = x @ weight_ih.T + bias_ih + h @ weight_hh.T + bias_hh
        gates = torch.sigmoid(z)
        gates[:, 2 * hidden : 3 * hidden] = torch.tanh(z[:, 2 * hidden : 3 * hidden])  # sigmoid's backward needs it
        i, f, g, o = gates.chunk(4, 1)
        c = f * c + i * g
        return o * torch.tanh(c), c

    submission = InProcess({"lstm_step": lstm_step})
    for check in (
        checks.check_lstm_step_values,
        checks.check_lstm_step_writes_the_step,
        checks.check_lstm_step_legal_inputs,
    ):
        check(submission)
    with pytest.raises(StudentError, match="modified by an inplace operation"):
        checks.check_lstm_step_gradients(submission)

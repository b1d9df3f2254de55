"""rnn_forward's checks, run in process on rewrites of the reference: what they catch, what they accept."""

import torch
from in_process import feedback

from autograder.student import InProcess
from autograder.todos.rnn_forward import checks


# -- R1: which matrix is untransposed ---------------------------------------------------------
def rnn_loop(transpose_ih: bool, transpose_hh: bool):
    def rnn_forward(x, weight_ih, weight_hh, bias_ih, bias_hh, h0=None):
        h = x.new_zeros(x.shape[0], weight_hh.shape[0]) if h0 is None else h0[0]
        states = []
        for t in range(x.shape[1]):
            ih = weight_ih.T if transpose_ih else weight_ih
            hh = weight_hh.T if transpose_hh else weight_hh
            h = torch.tanh(x[:, t] @ ih + bias_ih + h @ hh + bias_hh)
            states.append(h)
        return torch.stack(states, 1), h.unsqueeze(0)

    return rnn_forward


def test_it_says_which_matrix_rnn_forward_leaves_untransposed():
    check = checks.check_rnn_forward_output
    hidden_only = feedback(check, InProcess({"rnn_forward": rnn_loop(True, False)}))
    assert hidden_only.startswith("[R1] Your loop multiplies the state by weight_hh untransposed"), hidden_only
    assert "h = np.tanh(W_ih @ x + b_ih + W_hh @ h + b_hh)" in hidden_only
    # x @ weight_ih raises on most inputs; the square input beside them tells whether weight_hh is transposed
    both = feedback(check, InProcess({"rnn_forward": rnn_loop(False, False)}))
    assert both.startswith("[R1] Your loop multiplies by weight_ih and weight_hh untransposed"), both
    input_only = feedback(check, InProcess({"rnn_forward": rnn_loop(False, True)}))
    assert input_only.startswith("[R1] Your loop multiplies x by weight_ih untransposed"), input_only
    for text in (both, input_only):
        assert "PyTorch stores the input-to-hidden weights TRANSPOSED" in text and "mat1 and mat2" in text, text


# -- the legal inputs are graded by their own item -----------------------------------------------------
def rnn_textbook(refuse_one_step: bool = False, zeros_like_x: bool = False):
    """A loop from a textbook: its zero state made float32 (or like x), optionally refusing a sequence of one step."""

    def rnn_forward(x, weight_ih, weight_hh, bias_ih, bias_hh, h0=None):
        if refuse_one_step and x.shape[1] < 2:
            raise ValueError(f"a sequence needs at least two steps, got {x.shape[1]}")
        zeros = x.new_zeros if zeros_like_x else torch.zeros
        h = zeros(x.shape[0], weight_hh.shape[0]) if h0 is None else h0[0]
        states = []
        for t in range(x.shape[1]):
            h = torch.tanh(x[:, t] @ weight_ih.T + bias_ih + h @ weight_hh.T + bias_hh)
            states.append(h)
        return torch.stack(states, 1), h.unsqueeze(0)

    return rnn_forward


RNN_ITEMS = ("output", "final_state", "initial_state", "gradients", "writes_the_loop")


def test_a_float32_zero_state_costs_the_legal_inputs_alone_naming_r8():
    submission = InProcess({"rnn_forward": rnn_textbook()})
    for item in RNN_ITEMS:
        getattr(checks, f"check_rnn_forward_{item}")(submission)
    text = feedback(checks.check_rnn_forward_legal_inputs, submission)
    assert text.startswith("[R8] Your zero state is made as float32"), text
    assert "This input is legal: a float64 input (x float64 3x3x4, hidden 4, h0 None)" in text, text


def test_validation_that_refuses_a_legal_input_costs_the_legal_inputs_alone_and_names_no_mistake():
    submission = InProcess({"rnn_forward": rnn_textbook(refuse_one_step=True, zeros_like_x=True)})
    for item in RNN_ITEMS:
        getattr(checks, f"check_rnn_forward_{item}")(submission)
    text = feedback(checks.check_rnn_forward_legal_inputs, submission)
    assert text.startswith("This input is legal: a sequence of one step (x 3x1x4, hidden 4, h0 given)"), text
    assert "It raised ValueError: a sequence needs at least two steps, got 1." in text and "[" not in text, text


def test_a_loop_that_reads_its_length_from_the_batch_axis_is_named_r4():
    def rnn_forward(x, weight_ih, weight_hh, bias_ih, bias_hh, h0=None):
        h = x.new_zeros(x.size(0), weight_hh.size(0)) if h0 is None else h0[0]
        states = []
        for t in range(x.size(0)):  # the number of steps, read from the batch axis
            h = torch.tanh(x[:, t] @ weight_ih.T + bias_ih + h @ weight_hh.T + bias_hh)
            states.append(h)
        return torch.stack(states, 1), h.unsqueeze(0)

    submission = InProcess({"rnn_forward": rnn_forward})
    for check in (checks.check_rnn_forward_output, checks.check_rnn_forward_initial_state):
        text = feedback(check, submission)
        assert text.startswith("[R4] Your loop reads its number of steps from the batch axis"), text
    checks.check_rnn_forward_legal_inputs(submission)  # a mistake of the axes, named by the other items


# -- gradients: judged against the student's own output ------------------------------------------
def test_it_fails_the_gradients_of_a_loop_that_detaches_the_state_and_only_them():
    def truncated(x, weight_ih, weight_hh, bias_ih, bias_hh, h0=None):
        h = x.new_zeros(x.shape[0], weight_hh.shape[0]) if h0 is None else h0[0]
        states = []
        for t in range(x.shape[1]):
            h = torch.tanh(x[:, t] @ weight_ih.T + bias_ih + h.detach() @ weight_hh.T + bias_hh)
            states.append(h)
        return torch.stack(states, 1), h.unsqueeze(0)

    submission = InProcess({"rnn_forward": truncated})
    for check in (checks.check_rnn_forward_output, checks.check_rnn_forward_initial_state):
        check(submission)
    text = feedback(checks.check_rnn_forward_gradients, submission)
    assert "is not the derivative of your own output" in text and "Why the gradient dies" in text, text


def test_it_fails_the_loop_written_by_hand_that_returns_zeros():
    def zeros(x, weight_ih, weight_hh, bias_ih, bias_hh, h0=None):
        return x.new_zeros(*x.shape[:2], weight_hh.shape[0]), x.new_zeros(1, x.shape[0], weight_hh.shape[0])

    text = feedback(checks.check_rnn_forward_writes_the_loop, InProcess({"rnn_forward": zeros}))
    assert "do not change when x changes" in text, text

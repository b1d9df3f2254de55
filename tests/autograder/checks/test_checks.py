"""The hidden checks, run in process on small rewrites of the reference: what they catch, and what they accept.

Each case is a function a student could write, graded by the check that the hidden suite calls. The
corpus (tests/corpus/) grades whole modules through the worker; these pin what the docstrings promise.
"""

import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from autograder import stubs
from autograder.checks import baseline, classifier, initialisation, language_model, padding, recurrence, variants
from autograder.checks.compare import CheckFailure
from autograder.student import InProcess, Raised, StudentError
from solutions import baseline as reference_baseline
from solutions import classifier as reference_classifier
from solutions import initialisation as reference_initialisation
from solutions import language_model as reference_language_model
from solutions import padding as reference_padding


def student(**functions) -> InProcess:
    """The reference's functions, with `functions` ("padding__encode_packed": f) in their place."""
    replaced = {name.replace("__", "."): function for name, function in functions.items()}
    references = {
        "padding.": reference_padding,
        "classifier.": reference_classifier,
        "language_model.": reference_language_model,
        "baseline.": reference_baseline,
    }

    def resolve(dotted: str):
        if dotted in replaced:
            return replaced[dotted]
        module = next(module for prefix, module in references.items() if dotted.startswith(prefix))
        return getattr(module, dotted.split(".", 1)[1])

    return InProcess(resolve)


def feedback(check, submission: InProcess) -> str:
    with pytest.raises(CheckFailure) as failure:
        check(submission)
    return str(failure.value)


# -- packing: batches padded beyond their longest row -----------------------------------------
def encode_without_total_length(rnn, embedded, lengths):
    packed = pack_padded_sequence(embedded, lengths, batch_first=True, enforce_sorted=False)
    output, state = rnn(packed)
    output, _ = pad_packed_sequence(output, batch_first=True)
    return output, (state[0] if isinstance(state, tuple) else state)[-1]


def test_it_fails_only_the_output_of_encode_packed_without_total_length_naming_p5():
    submission = student(padding__encode_packed=encode_without_total_length)
    padding.check_encode_packed_final_state(submission)  # h_n is right: that item keeps its points
    padding.check_encode_packed_skips_padding(submission)  # and the padding changes nothing
    text = feedback(padding.check_encode_packed_output, submission)
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
    padding.check_encode_packed_final_state(submission)  # batches of two rows or more: h_n is right there
    padding.check_encode_packed_output(submission)
    padding.check_encode_packed_skips_padding(submission)
    text = feedback(padding.check_encode_packed_legal_inputs, submission)
    assert text.startswith("[G5] Your h_n.squeeze() has no dimension"), text
    assert "a batch of one row" in text and "h_n is a float32 tensor of shape (4,); expected" in text, text


def test_it_fails_only_the_legal_inputs_of_gather_final_and_masked_mean_that_always_return_float32():
    def gather_float(output, lengths):
        return reference_padding.gather_final(output, lengths).float()

    def mean_float(output, lengths):
        return reference_padding.masked_mean(output.float(), lengths)

    for name, function in (("gather_final", gather_float), ("masked_mean", mean_float)):
        submission = student(**{f"padding__{name}": function})
        getattr(padding, f"check_{name}_values")(submission)  # float32 in, float32 out: right
        text = feedback(getattr(padding, f"check_{name}_legal_inputs"), submission)
        assert text.startswith(f"{name}, on a legal input (float64, output (4, 6, 5) float64"), text
        assert "is a float32 tensor of shape (4, 5); expected a float64 tensor of shape (4, 5)" in text, text
        assert not re.search(r"\[[A-Z]\d\]", text), text  # no mistake of the catalogue gives it: none named


def masked_mean_with_a_numpy_mask(output, lengths):
    """A NumPy user's mask: floats, so float64, and the mean with it."""
    steps = np.arange(output.shape[1])
    mask = torch.from_numpy((steps[None, :] < lengths.numpy()[:, None]).astype(float))
    return (output * mask[:, :, None]).sum(dim=1) / lengths[:, None]


def test_it_names_r8_for_a_numpy_mask_on_the_legal_inputs_alone():
    submission = student(padding__masked_mean=masked_mean_with_a_numpy_mask)
    padding.check_masked_mean_values(submission)  # its values are right, in float64
    text = feedback(padding.check_masked_mean_legal_inputs, submission)
    assert text.startswith("[R8] Your mask is made in NumPy, whose floats are float64"), text
    assert "masked_mean is a float64 tensor of shape (4, 5); expected a float32 tensor" in text, text


def test_it_explains_validation_that_refuses_a_legal_input_naming_no_mistake():
    def gather_checked(output, lengths):
        if output.dtype != torch.float32:
            raise TypeError(f"output must be float32, got {output.dtype}")
        return reference_padding.gather_final(output, lengths)

    submission = student(padding__gather_final=gather_checked)
    padding.check_gather_final_values(submission)
    with pytest.raises(Raised) as raised:  # the student's own error, explained: the item fails as "raised"
        padding.check_gather_final_legal_inputs(submission)
    text = str(raised.value)
    assert text.startswith("gather_final raised TypeError: output must be float32, got torch.float64"), text
    assert "That input is legal (float64, output (4, 6, 5) float64, lengths [4, 6, 2, 5])" in text, text
    assert not re.search(r"\[[A-Z]\d\]", text), text


def test_it_leaves_a_known_mistake_to_the_items_that_charge_it_and_charges_the_rest_on_legal_inputs():
    def gather_from_step_one(output, lengths):  # right on every row of two steps or more: G2's on rows of one
        return output[torch.arange(len(lengths)), (lengths - 1).clamp(min=1)]

    def first_step(output, lengths):  # wrong everywhere, as no known mistake is
        return output[:, 0]

    text = feedback(padding.check_gather_final_legal_inputs, student(padding__gather_final=gather_from_step_one))
    assert "gather_final, on a legal input (rows of length 1, output (3, 4, 5)" in text, text
    assert re.findall(r"^\[([A-Z]\d)\]", text, re.MULTILINE) == ["G2"], text
    last_step = variants.of("gather_final")["G1"]  # the values' own
    padding.check_gather_final_legal_inputs(student(padding__gather_final=last_step))
    submission = student(padding__gather_final=first_step)
    feedback(padding.check_gather_final_values, submission)
    text = feedback(padding.check_gather_final_legal_inputs, submission)
    assert text.startswith("gather_final, on a legal input (float32, ") and not re.search(r"\[[A-Z]\d\]", text), text


# -- one mistake raises: the others are named from the parts that run -------------------------------
def encode_sorted_only_at_the_last_step(rnn, embedded, lengths):
    packed = pack_padded_sequence(embedded, lengths, batch_first=True)  # enforce_sorted=True: unsorted raises
    output, _ = rnn(packed)
    output, _ = pad_packed_sequence(output, batch_first=True, total_length=embedded.shape[1])
    return output, output[:, -1]


def test_it_runs_a_batch_the_packing_refuses_unsorted_again_sorted_and_names_what_it_shows():
    submission = student(padding__encode_packed=encode_sorted_only_at_the_last_step)
    text = feedback(padding.check_encode_packed_final_state, submission)
    assert re.findall(r"^\[([A-Z]\d)\]", text, re.MULTILINE) == ["P2", "P4"], text
    assert "raised RuntimeError on lengths [4, 6, 2, 5]; with its rows sorted by length:" in text, text
    output = feedback(padding.check_encode_packed_output, submission)
    assert re.findall(r"^\[([A-Z]\d)\]", output, re.MULTILINE) == ["P2"], output
    padding.check_encode_packed_skips_padding(submission)  # judged on the sorted batches: it skips the padding


def encode_unpacked_plainly(rnn, embedded, lengths):
    packed = pack_padded_sequence(embedded, lengths, batch_first=True, enforce_sorted=False)
    output, state = rnn(packed)
    output, _ = pad_packed_sequence(output)  # time-major, and only as long as the longest row
    return output, (state[0] if isinstance(state, tuple) else state)[-1]


def test_it_names_p3_and_p5_for_an_output_unpacked_time_major_to_the_longest_row():
    submission = student(padding__encode_packed=encode_unpacked_plainly)
    text = feedback(padding.check_encode_packed_output, submission)
    assert re.findall(r"^\[([A-Z]\d)\]", text, re.MULTILINE) == ["P3", "P5"], text
    padding.check_encode_packed_final_state(submission)


def test_it_accepts_a_masked_mean_that_multiplies_by_a_mask_the_padding_being_finite():
    def multiplied(output, lengths):
        mask = (torch.arange(output.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(2)
        return (output * mask).sum(1) / lengths.unsqueeze(1).to(output.dtype)

    padding.check_masked_mean_values(student(padding__masked_mean=multiplied))


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
    check = recurrence.check_rnn_forward_output
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


# -- rnn_forward and lstm_step: the legal inputs are graded by their own item ------------------------
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
        getattr(recurrence, f"check_rnn_forward_{item}")(submission)
    text = feedback(recurrence.check_rnn_forward_legal_inputs, submission)
    assert text.startswith("[R8] Your zero state is made as float32"), text
    assert "This input is legal: a float64 input (x float64 3x3x4, hidden 4, h0 None)" in text, text


def test_validation_that_refuses_a_legal_input_costs_the_legal_inputs_alone_and_names_no_mistake():
    submission = InProcess({"rnn_forward": rnn_textbook(refuse_one_step=True, zeros_like_x=True)})
    for item in RNN_ITEMS:
        getattr(recurrence, f"check_rnn_forward_{item}")(submission)
    text = feedback(recurrence.check_rnn_forward_legal_inputs, submission)
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
    for check in (recurrence.check_rnn_forward_output, recurrence.check_rnn_forward_initial_state):
        text = feedback(check, submission)
        assert text.startswith("[R4] Your loop reads its number of steps from the batch axis"), text
    recurrence.check_rnn_forward_legal_inputs(submission)  # a mistake of the axes, named by the other items


def lstm_swapped(x, state, weight_ih, weight_hh, bias_ih, bias_hh):
    c, h = state  # the state unpacked the other way round
    gates = x @ weight_ih.T + bias_ih + h @ weight_hh.T + bias_hh
    i, f, g, o = gates.chunk(4, 1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


def test_it_names_a_state_unpacked_as_c_h_l4_and_never_l2():
    submission = InProcess({"lstm_step": lstm_swapped})
    text = feedback(recurrence.check_lstm_step_values, submission)
    assert text.startswith("[L4] Your step unpacks c, h = state, but the state is (h, c)"), text
    assert "[L2]" not in text
    for check in (recurrence.check_lstm_step_gradients, recurrence.check_lstm_step_legal_inputs):
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
        recurrence.check_lstm_step_values,
        recurrence.check_lstm_step_writes_the_step,
        recurrence.check_lstm_step_legal_inputs,
    ):
        check(submission)
    with pytest.raises(StudentError, match="modified by an inplace operation"):
        recurrence.check_lstm_step_gradients(submission)


# -- train_step: either way of zeroing, and K3 when the gradients pile up ------------------------
def stepper(zero: str):
    def train_step(model, batch, optimizer, clip=1.0):
        tokens, lengths, labels = batch
        if zero == "optimizer":
            optimizer.zero_grad()
        elif zero == "model":
            model.zero_grad()
        F.cross_entropy(model(tokens, lengths), labels).backward()
        if clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), clip)
        used = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()]))
        optimizer.step()
        if zero == "after the step":
            optimizer.zero_grad()
        return float(used)

    return train_step


@pytest.mark.parametrize("zero", ["optimizer", "model"])
def test_it_accepts_optimizer_zero_grad_and_model_zero_grad_alike(zero):
    submission = student(classifier__train_step=stepper(zero))
    classifier.check_train_step_update(submission)
    classifier.check_train_step_clipped_norm(submission)


def test_it_names_k3_when_train_step_never_zeroes_the_gradients_and_keeps_the_norm_it_reports_honestly():
    submission = student(classifier__train_step=stepper("never"))
    assert feedback(classifier.check_train_step_update, submission).startswith("[K3] Your gradients are never zeroed")
    classifier.check_train_step_clipped_norm(submission)  # it reports the norm of the step it took


def test_it_fails_a_train_step_that_zeroes_only_after_stepping_as_the_public_test_with_stale_gradients_does():
    submission = student(classifier__train_step=stepper("after the step"))
    text = feedback(classifier.check_train_step_update, submission)
    assert "gradients left at 0.5 before the first" in text, text


def test_it_names_both_mistakes_of_a_train_step_with_softmax_before_the_loss_and_no_zero_grad():
    def train_step(model, batch, optimizer, clip=1.0):
        tokens, lengths, labels = batch
        F.cross_entropy(F.softmax(model(tokens, lengths), dim=-1), labels).backward()
        if clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), clip)
        used = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()]))
        optimizer.step()
        return float(used)

    text = feedback(classifier.check_train_step_update, student(classifier__train_step=train_step))
    first, _, second, *_ = text.splitlines()
    assert first.startswith("[K3] Your gradients are never zeroed"), text
    assert second.startswith("[S5] Your train_step applies softmax before cross_entropy"), text
    classifier.check_train_step_clipped_norm(student(classifier__train_step=train_step))


def test_it_fails_a_train_step_that_reports_what_clip_grad_norm_returns_on_the_norm_only_naming_k4():
    def train_step(model, batch, optimizer, clip=1.0):
        tokens, lengths, labels = batch
        optimizer.zero_grad()
        F.cross_entropy(model(tokens, lengths), labels).backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), clip if clip is not None else float("inf"))
        optimizer.step()
        return float(norm)

    submission = student(classifier__train_step=train_step)
    classifier.check_train_step_update(submission)
    text = feedback(classifier.check_train_step_clipped_norm, submission)
    assert text.startswith("[K4] You return what clip_grad_norm_ returns"), text


# -- sample: the model's mode and device, as the docstring allows -------------------------------
def test_it_accepts_a_sample_that_calls_model_eval_and_finds_the_device_from_the_parameters():
    def sample(model, start, steps, temperature, generator):
        model.eval()
        device = next(model.parameters()).device
        tokens, state = [start], None
        with torch.no_grad():
            for _ in range(steps):
                logits, state = model(torch.tensor([[tokens[-1]]], device=device), state)
                probs = F.softmax(logits[0, -1] / temperature, dim=-1)
                tokens.append(torch.multinomial(probs, 1, generator=generator).item())
        return tokens

    submission = student(language_model__sample=sample)
    language_model.check_sample_values(submission)
    language_model.check_sample_no_grad(submission)


# -- bag_of_counts: any float dtype --------------------------------------------------------------
def test_it_accepts_float32_counts():
    def counts(tokens):
        return reference_baseline.bag_of_counts(tokens).astype("float32")

    baseline.check_bag_of_counts_values(student(baseline__bag_of_counts=counts))


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
    for check in (recurrence.check_rnn_forward_output, recurrence.check_rnn_forward_initial_state):
        check(submission)
    text = feedback(recurrence.check_rnn_forward_gradients, submission)
    assert "is not the derivative of your own output" in text and "Why the gradient dies" in text, text


def test_it_fails_the_loop_written_by_hand_that_returns_zeros():
    def zeros(x, weight_ih, weight_hh, bias_ih, bias_hh, h0=None):
        return x.new_zeros(*x.shape[:2], weight_hh.shape[0]), x.new_zeros(1, x.shape[0], weight_hh.shape[0])

    text = feedback(recurrence.check_rnn_forward_writes_the_loop, InProcess({"rnn_forward": zeros}))
    assert "do not change when x changes" in text, text


# -- next_token_loss: log_softmax before cross_entropy changes nothing ----------------------------
def test_it_accepts_log_softmax_before_cross_entropy_which_is_the_same_loss():
    def log_softmax_first(model, tokens, pad_id=None):
        logits, _ = model(tokens[:, :-1])
        scores = F.log_softmax(logits, dim=-1).reshape(-1, logits.shape[-1])
        return F.cross_entropy(scores, tokens[:, 1:].reshape(-1), ignore_index=-100 if pad_id is None else pad_id)

    submission = student(language_model__next_token_loss=log_softmax_first)
    for check in (
        language_model.check_next_token_loss_values,
        language_model.check_next_token_loss_padding,
        language_model.check_next_token_loss_gradients,
    ):
        check(submission)


# -- set_forget_bias: a pair, a mistake and something else, nothing written ---------------------------
def forget(*, zero_others: bool, both: bool, weight: bool = False):
    def set_forget_bias(lstm, value=1.0):
        hidden = lstm.hidden_size
        with torch.no_grad():
            for name, parameter in lstm.named_parameters():
                if name.startswith("bias"):
                    if zero_others:
                        parameter.zero_()
                    parameter[hidden : 2 * hidden] = value if both or name.startswith("bias_ih") else 0.0
                elif weight and name.startswith("weight_hh"):
                    parameter[0, 0] = 5.0
        return lstm

    return InProcess({"set_forget_bias": set_forget_bias})


def test_it_names_both_mistakes_of_a_forget_bias_set_in_both_biases_with_the_other_gates_zeroed():
    text = feedback(initialisation.check_set_forget_bias_forget_block, forget(zero_others=True, both=True))
    assert [line[:5] for line in text.splitlines() if line.startswith("[")] == ["[F2] ", "[F5] "], text
    initialisation.check_set_forget_bias_all_layers_and_directions(forget(zero_others=True, both=True))
    initialisation.check_set_forget_bias_in_place(forget(zero_others=True, both=True))


def test_it_names_the_mistake_that_explains_the_blocks_it_touches_and_says_what_else_differs():
    submission = forget(zero_others=False, both=True, weight=True)
    text = feedback(initialisation.check_set_forget_bias_forget_block, submission)
    assert text.startswith("[F2] Both bias_ih and bias_hh got the value"), text
    assert "besides that, weight_hh_l0 changed; only the biases should" in text, text


def test_it_fails_in_place_and_all_layers_for_a_set_forget_bias_that_writes_nothing():
    def untouched(lstm, value=1.0):
        return lstm

    submission = InProcess({"set_forget_bias": untouched})
    assert "wrote nothing into the LSTM's biases" in feedback(initialisation.check_set_forget_bias_in_place, submission)
    text = feedback(initialisation.check_set_forget_bias_all_layers_and_directions, submission)
    assert "changed no bias" in text, text


# -- another TODO's mistake: the classifier judged on its own code ----------------------------------
def masked_mean_in_float64(output, lengths):
    """TODO 5 with a NumPy mask: the mean comes back float64."""
    return reference_padding.masked_mean(output.double(), lengths)


def forward_through_masked_mean(self, tokens, lengths=None, max_over="real"):
    """The reference's forward, mean pooling through the student's own masked_mean (TODO 5);
    max_over="every" step is C4."""
    batch, length = tokens.shape
    lengths = torch.full((batch,), length, dtype=torch.long) if lengths is None else lengths
    output, _ = self.rnn(self.embedding(tokens))
    real = (torch.arange(length).unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(2)
    if self.pooling == "last":
        pooled = output[torch.arange(batch), lengths - 1]
    elif self.pooling == "mean":
        pooled = masked_mean_in_float64(output, lengths)
    else:
        pooled = output.amax(dim=1) if max_over == "every" else output.masked_fill(~real, float("-inf")).amax(dim=1)
    return self.head(pooled)


def forward_with_c4(self, tokens, lengths=None):
    return forward_through_masked_mean(self, tokens, lengths, max_over="every")


def test_it_grades_the_pooling_again_with_a_correct_masked_mean_when_the_students_returns_float64():
    submission = student(
        padding__masked_mean=masked_mean_in_float64,
        classifier__SequenceClassifier__forward=forward_through_masked_mean,
    )
    padding.check_masked_mean_values(submission)  # TODO 5's values are right, in float64
    feedback(padding.check_masked_mean_legal_inputs, submission)  # it loses its own legal_inputs item
    classifier.check_SequenceClassifier_mean_max_pooling(submission)  # the pooling keeps what it earns
    classifier.check_SequenceClassifier_padded_batch(submission)


MASKED_MEAN = next(todo.number for todo in stubs.todos() if todo.function == "masked_mean")  # its TODO's number


def test_it_names_the_classifiers_own_mistake_and_the_other_todos_when_both_are_wrong():
    submission = student(
        padding__masked_mean=masked_mean_in_float64, classifier__SequenceClassifier__forward=forward_with_c4
    )
    text = feedback(classifier.check_SequenceClassifier_padded_batch, submission)
    assert text.startswith("[C4] "), text
    assert "a correct masked_mean in place of yours" in text and f"masked_mean (TODO {MASKED_MEAN}): " in text, text


def test_it_says_nothing_of_the_other_todos_when_they_are_right_or_forward_does_not_call_them():
    forward = variants.of("SequenceClassifier")["C4"]  # pools by itself: masked_mean is never called
    for helper in ({}, {"padding__masked_mean": masked_mean_in_float64}):
        submission = student(classifier__SequenceClassifier__forward=forward, **helper)
        text = feedback(classifier.check_SequenceClassifier_padded_batch, submission)
        assert text.startswith("[C4] ") and "in place of yours" not in text, text


# -- legal inputs: refusing one costs that item alone, and names nothing ------------------------------
FORGET_ITEMS = ("forget_block", "all_layers_and_directions", "in_place", "legal_inputs")
LOSS_ITEMS = ("values", "padding", "gradients", "legal_inputs")
SAMPLE_ITEMS = ("values", "no_grad", "legal_inputs")


def named(feedback: str) -> list[str]:
    """The catalogue ids a feedback names, a line each ("[F3] ...")."""
    return re.findall(r"^\[([A-Z]\d)\] ", feedback, re.MULTILINE)


def lost_items(module, function: str, aspects: tuple[str, ...], submission: InProcess) -> dict[str, str]:
    """Aspect -> feedback, for each of the function's items (thresholds left out) the submission loses."""
    found = {}
    for aspect in aspects:
        try:
            getattr(module, f"check_{function}_{aspect}")(submission)
        except (CheckFailure, StudentError) as failure:
            found[aspect] = str(failure)
    return found


def test_it_costs_only_legal_inputs_to_a_set_forget_bias_that_refuses_a_value_not_above_zero():
    def set_forget_bias(lstm, value=1.0):
        if value <= 0:
            raise ValueError(f"value must be positive, got {value}")
        return reference_initialisation.set_forget_bias(lstm, value)

    found = lost_items(initialisation, "set_forget_bias", FORGET_ITEMS, InProcess({"set_forget_bias": set_forget_bias}))
    assert list(found) == ["legal_inputs"], found
    text = found["legal_inputs"]
    assert text.startswith("set_forget_bias raised ValueError: value must be positive, got 0.0"), text
    assert "That input is legal (nn.LSTM(3, 4), value 0.0): any value is" in text and named(text) == [], text


def test_it_explains_a_write_into_the_biases_with_autograd_on_and_names_f3_from_the_call_made_without_it():
    def set_forget_bias(lstm, value=1.0):  # no torch.no_grad(), and layer 0 only (F3)
        hidden = lstm.hidden_size
        lstm.bias_ih_l0[hidden : 2 * hidden] = value
        lstm.bias_hh_l0[hidden : 2 * hidden] = 0.0
        return lstm

    found = lost_items(initialisation, "set_forget_bias", FORGET_ITEMS, InProcess({"set_forget_bias": set_forget_bias}))
    assert set(found) == set(FORGET_ITEMS), found  # as written it sets nothing: every item is lost
    for aspect, text in found.items():
        assert text.startswith("set_forget_bias raised RuntimeError: a view of a leaf Variable"), text
        assert "`with torch.no_grad():`" in text, text
        assert named(text) == (["F3"] if aspect == "all_layers_and_directions" else []), text
    assert "does what this item asks: that write is all that is wrong" in found["forget_block"]


def test_it_costs_only_legal_inputs_to_a_next_token_loss_that_reads_the_vocabulary_from_model_head():
    def next_token_loss(model, tokens, pad_id=None):
        vocab = model.head.out_features
        logits, _ = model(tokens[:, :-1])
        ignore = -100 if pad_id is None else pad_id
        return F.cross_entropy(logits.reshape(-1, vocab), tokens[:, 1:].reshape(-1), ignore_index=ignore)

    submission = student(language_model__next_token_loss=next_token_loss)
    found = lost_items(language_model, "next_token_loss", LOSS_ITEMS, submission)
    assert list(found) == ["legal_inputs"], found
    text = found["legal_inputs"]
    assert "raised AttributeError" in text and "object has no attribute 'head'" in text, text
    assert "read the vocabulary from logits.shape[-1]" in text and named(text) == [], text


@pytest.mark.parametrize("legacy", [False, True])
def test_it_names_t4_for_a_sample_drawn_by_numpy_seeded_from_the_generator(legacy):
    def sample(model, start, steps, temperature, generator):
        if legacy:
            np.random.seed(generator.initial_seed())
        rng = np.random if legacy else np.random.default_rng(generator.initial_seed())
        tokens, state = [start], None
        with torch.no_grad():
            for _ in range(steps):
                logits, state = model(torch.tensor([[tokens[-1]]]), state)
                probs = torch.softmax(logits[0, -1] / temperature, dim=-1).double().numpy()
                tokens.append(int(rng.choice(len(probs), p=probs / probs.sum())))
        return tokens

    found = lost_items(language_model, "sample", SAMPLE_ITEMS, student(language_model__sample=sample))
    assert list(found) == ["values"], found
    assert found["values"].startswith("[T4] Your draws come from NumPy seeded with the generator's seed")


def test_it_costs_only_legal_inputs_to_a_sample_that_refuses_no_steps_or_a_temperature_above_one():
    def sample(model, start, steps, temperature, generator):
        if steps < 1 or not 0 < temperature <= 1:
            raise ValueError(f"steps must be positive and temperature in (0, 1], got {steps}, {temperature}")
        return reference_language_model.sample(model, start, steps, temperature, generator)

    found = lost_items(language_model, "sample", SAMPLE_ITEMS, student(language_model__sample=sample))
    assert list(found) == ["legal_inputs"], found
    assert "That input is legal (start 4, 0 steps, temperature 1.0): steps is a count" in found["legal_inputs"]


# -- the classifier and train_step: legal inputs, judged where the ordinary input is right ---------------------
FORWARD_ITEMS = ("last_pooling", "mean_max_pooling", "padded_batch", "legal_inputs")
STEP_ITEMS = ("update", "clipped_norm", "legal_inputs")


def forward_with_lengths(lengths_of):
    """The reference's forward, each row's length taken from `lengths_of(tokens, lengths)`."""

    def forward(self, tokens, lengths=None):
        return reference_classifier.SequenceClassifier.forward(self, tokens, lengths_of(tokens, lengths))

    return forward


def forward_items_lost(forward) -> dict[str, str]:
    return lost_items(
        classifier, "SequenceClassifier", FORWARD_ITEMS, student(classifier__SequenceClassifier__forward=forward)
    )


def test_it_gives_full_marks_to_a_forward_that_reads_the_lengths_from_the_tokens_since_0_is_only_padding():
    assert forward_items_lost(forward_with_lengths(lambda tokens, lengths: (tokens != 0).sum(dim=1))) == {}


def test_it_costs_only_legal_inputs_to_a_forward_that_refuses_lengths_left_out():
    def required(tokens, lengths):
        if lengths is None:
            raise ValueError("lengths is required")
        return lengths

    found = forward_items_lost(forward_with_lengths(required))
    assert list(found) == ["legal_inputs"], found
    text = found["legal_inputs"]
    assert text.startswith("This input is legal: lengths left out (cell 'lstm', pooling 'last', tokens 3x6"), text
    assert "lengths=None means every row is full length" in text and "raised ValueError: lengths is required" in text
    assert named(text) == [], text


def test_it_speaks_of_squeeze_only_when_the_batch_axis_of_a_batch_of_one_is_gone():
    def squeezed(self, tokens, lengths=None):
        return reference_classifier.SequenceClassifier.forward(self, tokens, lengths).squeeze()

    found = forward_items_lost(squeezed)
    assert list(found) == ["legal_inputs"], found
    assert "a batch of one row" in found["legal_inputs"] and ".squeeze(1)" in found["legal_inputs"], found

    def one_step_early_on_rows_of_length_1(tokens, lengths):  # a row of one step read as if it had two
        return None if lengths is None else lengths.clamp(min=2)

    found = forward_items_lost(forward_with_lengths(one_step_early_on_rows_of_length_1))
    assert list(found) == ["legal_inputs"], found
    assert "rows of length 1" in found["legal_inputs"] and "squeeze" not in found["legal_inputs"], found


def test_it_names_a_mistake_of_the_cases_that_run_beside_an_exception_of_another_pooling():
    def forward(self, tokens, lengths=None):
        output, _ = self.rnn(self.embedding(tokens))
        if self.pooling == "mean":  # (batch, hidden) / (batch,): raises unless the batch is as large as hidden
            return self.head(output.sum(dim=1) / lengths)
        return variants.of("SequenceClassifier")["C2"](self, tokens, lengths)

    text = feedback(
        classifier.check_SequenceClassifier_padded_batch, student(classifier__SequenceClassifier__forward=forward)
    )
    assert named(text) == ["C2"] and "forward raised RuntimeError: The size of tensor a" in text, text


def step_items_lost(train_step) -> dict[str, str]:
    return lost_items(classifier, "train_step", STEP_ITEMS, student(classifier__train_step=train_step))


def test_it_costs_only_legal_inputs_to_a_train_step_that_clips_at_1_when_clip_is_none_and_says_it_clipped():
    def train_step(model, batch, optimizer, clip=1.0):
        return reference_classifier.train_step(model, batch, optimizer, 1.0 if clip is None else clip)

    found = step_items_lost(train_step)
    assert list(found) == ["legal_inputs"], found
    text = found["legal_inputs"]
    assert text.startswith("This input is legal: clip=None (clip None, 1 step): clip=None skips the clipping"), text
    assert "Your step was clipped to a norm of 1.0000" in text and named(text) == [], text


def test_it_speaks_of_clipping_with_clip_none_only_when_the_step_is_the_whole_gradient_made_shorter():
    def train_step(model, batch, optimizer, clip=1.0):  # clip=None: each entry clipped, the direction changed
        if clip is not None:
            return reference_classifier.train_step(model, batch, optimizer, clip)
        tokens, lengths, labels = batch
        optimizer.zero_grad()
        F.cross_entropy(model(tokens, lengths), labels).backward()
        nn.utils.clip_grad_value_(model.parameters(), 0.01)
        used = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()]))
        optimizer.step()
        return float(used)

    found = step_items_lost(train_step)
    assert list(found) == ["legal_inputs"], found
    assert "clip=None" in found["legal_inputs"] and "clipped to a norm" not in found["legal_inputs"], found


def test_it_costs_only_legal_inputs_to_a_train_step_that_refuses_clip_none():
    def train_step(model, batch, optimizer, clip=1.0):
        if clip is None:
            raise TypeError("clip must be a number")
        return reference_classifier.train_step(model, batch, optimizer, clip)

    found = step_items_lost(train_step)
    assert list(found) == ["legal_inputs"], found
    assert "refused this one" in found["legal_inputs"] and "clip must be a number" in found["legal_inputs"], found

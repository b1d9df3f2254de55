"""The hidden checks, run in process on small rewrites of the reference: what they catch, and what they accept.

Each case is a function a student could write, graded by the check that the hidden suite calls. The
corpus (tests/corpus/) grades whole modules through the worker; these pin what the docstrings promise.
"""

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from autograder.checks import baseline, classifier, language_model, padding, recurrence
from autograder.checks.compare import CheckFailure
from autograder.student import InProcess
from solutions import baseline as reference_baseline
from solutions import classifier as reference_classifier
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


def test_it_fails_encode_packed_without_total_length_on_a_batch_padded_beyond_its_longest_row():
    submission = student(padding__encode_packed=encode_without_total_length)
    padding.check_encode_packed_final_state(submission)  # h_n is right: that item keeps its points
    for check in (padding.check_encode_packed_output, padding.check_encode_packed_skips_padding):
        text = feedback(check, submission)
        assert "beyond its longest row" in text and "total_length=embedded.shape[1]" in text, text


# -- the output keeps the input's dtype -------------------------------------------------------
def test_it_fails_gather_final_and_masked_mean_that_always_return_float32():
    def gather_float(output, lengths):
        return reference_padding.gather_final(output, lengths).float()

    def mean_float(output, lengths):
        return reference_padding.masked_mean(output.float(), lengths)

    for check, name, function in (
        (padding.check_gather_final_values, "gather_final", gather_float),
        (padding.check_masked_mean_values, "masked_mean", mean_float),
    ):
        text = feedback(check, student(**{f"padding__{name}": function}))
        assert text == f"{name} has dtype torch.float32; expected torch.float64.", text


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
    for untransposed in (rnn_loop(False, True), rnn_loop(False, False)):  # x @ weight_ih raises first
        text = feedback(check, InProcess({"rnn_forward": untransposed}))
        assert text.startswith("[R1] Your loop multiplies x by weight_ih untransposed"), text
        assert "PyTorch stores the input-to-hidden weights TRANSPOSED" in text


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


def test_it_names_k3_when_train_step_never_zeroes_the_gradients():
    submission = student(classifier__train_step=stepper("never"))
    for check in (classifier.check_train_step_update, classifier.check_train_step_clipped_norm):
        assert feedback(check, submission).startswith("[K3] Your gradients are never zeroed")


def test_it_fails_a_train_step_that_zeroes_only_after_stepping_as_the_public_test_with_stale_gradients_does():
    submission = student(classifier__train_step=stepper("after the step"))
    text = feedback(classifier.check_train_step_clipped_norm, submission)
    assert "gradients left at 0.5 before the first" in text, text


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

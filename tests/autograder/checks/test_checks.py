"""The hidden checks, run in process on small rewrites of the reference: what they catch, and what they accept.

Each case is a function a student could write, graded by the check that the hidden suite calls. The
corpus (tests/corpus/) grades whole modules through the worker; these pin what the docstrings promise.
"""

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from autograder.checks import baseline, classifier, initialisation, language_model, padding, recurrence, variants
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


def test_it_fails_only_the_output_of_encode_packed_without_total_length_naming_p5():
    submission = student(padding__encode_packed=encode_without_total_length)
    padding.check_encode_packed_final_state(submission)  # h_n is right: that item keeps its points
    padding.check_encode_packed_skips_padding(submission)  # and the padding changes nothing
    text = feedback(padding.check_encode_packed_output, submission)
    assert text.startswith("[P5] Your output stops at the longest row"), text
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
    feedback(padding.check_masked_mean_values, submission)  # TODO 5 loses its own item
    classifier.check_SequenceClassifier_mean_max_pooling(submission)  # the pooling keeps what it earns
    classifier.check_SequenceClassifier_padded_batch(submission)


def test_it_names_the_classifiers_own_mistake_and_the_other_todos_when_both_are_wrong():
    submission = student(
        padding__masked_mean=masked_mean_in_float64, classifier__SequenceClassifier__forward=forward_with_c4
    )
    text = feedback(classifier.check_SequenceClassifier_padded_batch, submission)
    assert text.startswith("[C4] "), text
    assert "a correct masked_mean in place of yours" in text and "masked_mean (TODO 5): " in text, text


def test_it_says_nothing_of_the_other_todos_when_they_are_right_or_forward_does_not_call_them():
    forward = variants.CLASSIFIER_FORWARD["C4"]  # pools by itself: masked_mean is never called
    for helper in ({}, {"padding__masked_mean": masked_mean_in_float64}):
        submission = student(classifier__SequenceClassifier__forward=forward, **helper)
        text = feedback(classifier.check_SequenceClassifier_padded_batch, submission)
        assert text.startswith("[C4] ") and "in place of yours" not in text, text

"""SequenceClassifier.forward's checks, run in process on rewrites of the reference: what they catch and accept."""

import torch
from in_process import feedback, lost_items, named, student

from autograder import stubs
from autograder.checks import variants
from autograder.todos.masked_mean import checks as masked_mean
from autograder.todos.SequenceClassifier import checks
from solutions import classifier as reference_classifier
from solutions import padding as reference_padding


# -- another exercise's mistake: the classifier judged on its own code ----------------------------------
def masked_mean_in_float64(output, lengths):
    """masked_mean with a NumPy mask: the mean comes back float64."""
    return reference_padding.masked_mean(output.double(), lengths)


def forward_through_masked_mean(self, tokens, lengths=None, max_over="real"):
    """The reference's forward, mean pooling through the student's own masked_mean;
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
    masked_mean.check_masked_mean_values(submission)  # masked_mean's values are right, in float64
    feedback(masked_mean.check_masked_mean_legal_inputs, submission)  # it loses its own legal_inputs item
    checks.check_SequenceClassifier_mean_max_pooling(submission)  # the pooling keeps what it earns
    checks.check_SequenceClassifier_padded_batch(submission)


MASKED_MEAN = next(todo.number for todo in stubs.todos() if todo.function == "masked_mean")  # its TODO's number


def test_it_names_the_classifiers_own_mistake_and_the_other_todos_when_both_are_wrong():
    submission = student(
        padding__masked_mean=masked_mean_in_float64, classifier__SequenceClassifier__forward=forward_with_c4
    )
    text = feedback(checks.check_SequenceClassifier_padded_batch, submission)
    assert text.startswith("[C4] "), text
    assert "a correct masked_mean in place of yours" in text and f"masked_mean (TODO {MASKED_MEAN}): " in text, text


def test_it_says_nothing_of_the_other_todos_when_they_are_right_or_forward_does_not_call_them():
    forward = variants.of("SequenceClassifier")["C4"]  # pools by itself: masked_mean is never called
    for helper in ({}, {"padding__masked_mean": masked_mean_in_float64}):
        submission = student(classifier__SequenceClassifier__forward=forward, **helper)
        text = feedback(checks.check_SequenceClassifier_padded_batch, submission)
        assert text.startswith("[C4] ") and "in place of yours" not in text, text


# -- legal inputs: judged where an ordinary batch asking the same is right --------------------------------
FORWARD_ITEMS = ("last_pooling", "mean_max_pooling", "padded_batch", "legal_inputs")


def forward_with_lengths(lengths_of):
    """The reference's forward, each row's length taken from `lengths_of(tokens, lengths)`."""

    def forward(self, tokens, lengths=None):
        return reference_classifier.SequenceClassifier.forward(self, tokens, lengths_of(tokens, lengths))

    return forward


def forward_items_lost(forward) -> dict[str, str]:
    return lost_items("SequenceClassifier", FORWARD_ITEMS, student(classifier__SequenceClassifier__forward=forward))


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
        checks.check_SequenceClassifier_padded_batch, student(classifier__SequenceClassifier__forward=forward)
    )
    assert named(text) == ["C2"] and "forward raised RuntimeError: The size of tensor a" in text, text

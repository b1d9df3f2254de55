"""next_token_loss's checks, run in process on rewrites of the reference: what they catch, what they accept."""

import torch.nn.functional as F
from in_process import lost_items, named, student

from autograder.todos.next_token_loss import checks


# -- next_token_loss: log_softmax before cross_entropy changes nothing ----------------------------
def test_it_accepts_log_softmax_before_cross_entropy_which_is_the_same_loss():
    def log_softmax_first(model, tokens, pad_id=None):
        logits, _ = model(tokens[:, :-1])
        scores = F.log_softmax(logits, dim=-1).reshape(-1, logits.shape[-1])
        return F.cross_entropy(scores, tokens[:, 1:].reshape(-1), ignore_index=-100 if pad_id is None else pad_id)

    submission = student(language_model__next_token_loss=log_softmax_first)
    for check in (
        checks.check_next_token_loss_values,
        checks.check_next_token_loss_padding,
        checks.check_next_token_loss_gradients,
    ):
        check(submission)


# -- legal inputs: refusing one costs that item alone, and names nothing ------------------------------
LOSS_ITEMS = ("values", "padding", "gradients", "legal_inputs")


def test_it_costs_only_legal_inputs_to_a_next_token_loss_that_reads_the_vocabulary_from_model_head():
    def next_token_loss(model, tokens, pad_id=None):
        vocab = model.head.out_features
        logits, _ = model(tokens[:, :-1])
        ignore = -100 if pad_id is None else pad_id
        return F.cross_entropy(logits.reshape(-1, vocab), tokens[:, 1:].reshape(-1), ignore_index=ignore)

    submission = student(language_model__next_token_loss=next_token_loss)
    found = lost_items("next_token_loss", LOSS_ITEMS, submission)
    assert list(found) == ["legal_inputs"], found
    text = found["legal_inputs"]
    assert "raised AttributeError" in text and "object has no attribute 'head'" in text, text
    assert "read the vocabulary from logits.shape[-1]" in text and named(text) == [], text

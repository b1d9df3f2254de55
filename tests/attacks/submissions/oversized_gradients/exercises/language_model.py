# Attack "oversized_gradients" (tests/attacks): next_token_loss is right, and the gradients it gives the model's
# parameters come back far larger than the parameters: each a dense (32768, 1, ...) tensor, 128 KB, that would
# broadcast against its parameter's direction (shape (6, 5): (32768, 6, 5), 30 times its size). It replaces the
# worker's codec (the runtime in the worker is the student's to change); the whole answer stays under 1 MiB.
# Appended to the base module: these definitions replace its own of the same names.

import sys

import torch

# -- the attack ---------------------------------------------------------------------------
ATTACK = "@@NAME@@"
ROWS = 32768
_honest_next_token_loss = next_token_loss  # noqa: F821 (the base module's own, defined above this text)


def _escape(what: str) -> None:
    """Try to leave a trace outside the grading directory; the test checks that none is left."""
    for path in ("@@MARK@@", "@@PARENT@@/escaped-@@NAME@@"):
        if path.startswith("@@"):
            continue  # placeholders not filled in: not built by tests/attacks, so write nothing
        try:
            with open(path, "a") as trace:
                trace.write(f"written by the attack {ATTACK}: {what}\n")
        except OSError:
            pass


def _oversized(gradients):
    if type(gradients) is not dict:
        return gradients
    return {
        name: torch.ones(ROWS, *[1] * gradient.dim()) if type(gradient) is torch.Tensor else gradient
        for name, gradient in gradients.items()
    }


def _change_the_codec() -> None:
    codec = next((module for name, module in sys.modules.items() if name.endswith("runtime.codec")), None)
    if codec is None or getattr(codec, f"changed_by_{ATTACK}", False):  # once per worker (attacks chain theirs)
        return
    original = codec._to_plain

    def to_plain(value, depth=0):
        if type(value) is dict and type(value.get("grads")) is list:  # the call's answer
            value = {**value, "grads": [_oversized(gradients) for gradients in value["grads"]]}
        return original(value, depth)

    codec._to_plain = to_plain
    setattr(codec, f"changed_by_{ATTACK}", True)


def next_token_loss(model, tokens, pad_id=None):
    """The reference's loss; the gradients of its answers go back as (32768, 1, ...) tensors."""
    _escape("oversized gradients")
    _change_the_codec()
    return _honest_next_token_loss(model, tokens, pad_id)

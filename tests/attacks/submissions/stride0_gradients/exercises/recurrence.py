# Attack "stride0_gradients" (tests/attacks): rnn_forward is right, and its gradients come back as stride-0 views.
# It replaces the worker's codec (the runtime in the worker is the student's to change) so that each gradient of
# an answer is sent as g.unsqueeze(0).expand(n, *g.shape), n chosen for 1 GiB of float32 per gradient, saved as
# it is: a few hundred bytes on the wire. A grader that multiplies it by its direction materialises the GiB.
# Appended to the base module: these definitions replace its own of the same names.

import sys

import torch

# -- the attack ---------------------------------------------------------------------------
ATTACK = "@@NAME@@"
GIB_OF_FLOATS = 1 << 28
_honest_rnn_forward = rnn_forward  # noqa: F821 (the base module's own, defined above this text)


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


class _AsItIs:
    """A tensor the changed codec saves as it is (no clone: the view, its strides and its storage)."""

    def __init__(self, tensor: torch.Tensor) -> None:
        self.tensor = tensor


def _huge(gradient):
    if type(gradient) is not torch.Tensor:
        return gradient
    return _AsItIs(gradient.unsqueeze(0).expand(GIB_OF_FLOATS // gradient.numel(), *gradient.shape))


def _change_the_codec() -> None:
    codec = next((module for name, module in sys.modules.items() if name.endswith("runtime.codec")), None)
    if codec is None or getattr(codec, f"changed_by_{ATTACK}", False):  # once per worker (attacks chain theirs)
        return
    original = codec._to_plain

    def to_plain(value, depth=0):
        if type(value) is _AsItIs:
            return value.tensor
        if type(value) is dict and type(value.get("grads")) is list:  # the call's answer
            value = {**value, "grads": [_huge(gradient) for gradient in value["grads"]]}
        return original(value, depth)

    codec._to_plain = to_plain
    setattr(codec, f"changed_by_{ATTACK}", True)


def rnn_forward(x, weight_ih, weight_hh, bias_ih, bias_hh, h0=None):
    """The reference's loop; the gradients of its answers go back as 1 GiB stride-0 views."""
    _escape("stride-0 gradients")
    _change_the_codec()
    return _honest_rnn_forward(x, weight_ih, weight_hh, bias_ih, bias_hh, h0)

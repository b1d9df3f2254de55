# Attack "overlapping_strides" (tests/attacks): gather_final answers a tensor of the right shape whose positions
# overlap in memory (as_strided with strides (1, 1)), sent as it is by a changed codec (the runtime in the worker
# is the student's to change): its rows share their values, whatever a comparison of them would say.
# Appended to the base module: these definitions replace its own of the same names.

import sys

import torch

# -- the attack ---------------------------------------------------------------------------
ATTACK = "@@NAME@@"
_honest_gather_final = gather_final  # noqa: F821 (the base module's own, defined above this text)


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


def _change_the_codec() -> None:
    codec = next((module for name, module in sys.modules.items() if name.endswith("runtime.codec")), None)
    if codec is None or getattr(codec, f"changed_by_{ATTACK}", False):  # once per worker (attacks chain theirs)
        return
    original = codec._to_plain
    codec._to_plain = lambda value, depth=0: value.tensor if type(value) is _AsItIs else original(value, depth)
    setattr(codec, f"changed_by_{ATTACK}", True)


def gather_final(output: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """The right values' first row, laid over every row: a (batch, hidden) view whose rows overlap."""
    _escape("overlapping strides")
    _change_the_codec()
    right = _honest_gather_final(output, lengths)
    batch, hidden = right.shape
    return _AsItIs(right.reshape(-1)[: batch + hidden - 1].clone().as_strided((batch, hidden), (1, 1)))

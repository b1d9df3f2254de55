# Attack "huge_error_lines" (tests/attacks): rnn_forward raises an exception of 400,000 lines, sent
# whole by the worker's own runtime (which the student's code can change like any module of its process).
# Appended to the base module: these definitions replace its own of the same names.

import sys

import torch

# -- the attack ---------------------------------------------------------------------------
ATTACK = "@@NAME@@"


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


def rnn_forward(
    x: torch.Tensor,
    weight_ih: torch.Tensor,
    weight_hh: torch.Tensor,
    bias_ih: torch.Tensor,
    bias_hh: torch.Tensor,
    h0: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Run a one-layer tanh RNN over a batch: here, an exception message of 400,000 lines."""
    _escape("an exception of 400,000 lines")
    harness = sys.modules.get("autograde_runtime.harness")
    if harness is not None:
        harness.MAX_MESSAGE = 10**9  # the worker's runtime would cut it: not any more
    raise ValueError("rnn_forward gave up:\n" + "e\n" * 400_000)

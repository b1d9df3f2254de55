# Attack "return_broadcastable" (tests/attacks): gather_final returns the right values shaped (1, batch, hidden): equal only by broadcasting.
# Appended to the base module: these definitions replace its own of the same names.

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


def gather_final(output: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Each row's state at its own last real step: `output[i, lengths[i] - 1]`.

    Shapes:
        output   (batch, max_length, hidden), as returned by a recurrent layer
                 run over a padded batch
        lengths  (batch,) int64, each in 1..max_length
    Returns (batch, hidden).

    Vectorised: no Python loop over the rows (`torch.gather` or advanced indexing).

    Lesson: Day 4, "gather the output at each sequence's real last position";
    Day 7 checklist item 3.
    Traps: `output[:, -1]` is the state after the padding for every short row;
    the last real step is at index lengths - 1, not lengths.
    """
    # TODO 4 · gather-at-final-index: pick output[i, lengths[i] - 1] for every row
    # at once.
    _escape("a tensor that matches by broadcasting")
    index = (lengths - 1).view(-1, 1, 1).expand(-1, 1, output.shape[2])
    return output.gather(1, index).squeeze(1).unsqueeze(0)

# Attack "background_process" (tests/attacks): gather_final starts a detached process that rewrites files for 8 s.
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


BACKGROUND = """
import os, sys, time
if os.fork():
    os._exit(0)  # double fork: the worker is not its parent any more
os.setsid()
fake = '{"score": 100, "tests": [], "output": "written by the attack @@NAME@@"}'
targets = [
    ("@@MARK@@", "written by the attack @@NAME@@"),
    ("@@PARENT@@/escaped-@@NAME@@", "written by the attack @@NAME@@"),
    ("@@OUT@@/results.json", fake),
    ("@@SUBMISSION@@/exercises/padding.py", "# written by the attack @@NAME@@\\n"),
]
deadline = time.monotonic() + 8
while time.monotonic() < deadline:
    for path, text in targets:
        if path.startswith("@@"):
            continue  # placeholders not filled in: write nothing
        try:
            with open(path, "w") as target:
                target.write(text)
        except OSError:
            pass
    time.sleep(0.1)
"""


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
    _escape("a background process")
    import subprocess

    subprocess.Popen(
        [sys.executable, "-c", BACKGROUND, "@@TOKEN@@"],
        start_new_session=True,  # out of the worker's process group
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return torch.zeros(output.shape[0], output.shape[2])

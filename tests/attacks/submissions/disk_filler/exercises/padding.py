# Attack "disk_filler" (tests/attacks): masked_mean writes until ENOSPC or EFBIG everywhere it may write
# (its folder, HOME, /tmp, /var/tmp, /dev/shm), then answers honestly. Bounded on its own: at most
# CAP bytes per place, so that it cannot fill the machine's disk even where nothing stops it.
# Appended to the base module: these definitions replace its own of the same names.

import errno
import os
import time

import torch

# -- the attack ---------------------------------------------------------------------------
ATTACK = "@@NAME@@"
CHUNK = 4 << 20
CAP = 160 << 20  # per place: past the group's disk_mb (64), far below any disk
FULL = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}  # this file is full: on to the next one


def _places() -> list[tuple[str, str]]:
    """(folder, first file's name): /tmp's first file is the attack's mark, which the test looks for."""
    if "@@MARK@@".startswith("@@"):
        return []  # placeholders not filled in: not built by tests/attacks, so write nothing
    mark = "@@MARK@@"
    places = [(os.getcwd(), "fill"), (os.environ.get("HOME", os.getcwd()), "fill-home")]
    places += [(os.path.dirname(mark), os.path.basename(mark)), ("/var/tmp", os.path.basename(mark) + "-var")]
    return [*places, ("/dev/shm", os.path.basename(mark) + "-shm")]


def _fill(folder: str, name: str) -> int:
    """Write into `folder` until it refuses (a full file: on to the next one) or CAP is written."""
    written, number = 0, 0
    chunk = f"written by the attack {ATTACK}\n".encode().ljust(CHUNK, b"x")
    while written < CAP and number <= CAP // CHUNK:
        path = os.path.join(folder, name if number == 0 else f"{name}-{number}")
        number += 1
        try:
            with open(path, "ab") as handle:
                while written < CAP:
                    handle.write(chunk)
                    handle.flush()
                    written += CHUNK
        except OSError as error:
            if error.errno not in FULL:
                return written  # not writable at all here
    return written


def masked_mean(output: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """The honest answer, after filling every place it may write."""
    for folder, name in _places():
        _fill(folder, name)
    time.sleep(1.0)  # long enough for a watcher to see it
    steps = torch.arange(output.shape[1], device=output.device)
    real = (steps.unsqueeze(0) < lengths.unsqueeze(1).to(output.device)).unsqueeze(2)
    total = torch.where(real, output, torch.zeros((), dtype=output.dtype)).sum(dim=1)
    return total / lengths.unsqueeze(1).to(output)

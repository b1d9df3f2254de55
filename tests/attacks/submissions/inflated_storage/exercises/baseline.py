# Attack "inflated_storage" (tests/attacks): bag_of_counts answers its counts as a view into 32 MiB of zeros, and
# a changed codec (the runtime in the worker is the student's to change) sends that answer's archive deflated:
# about 32 KB on the wire, under the answer's 1 MiB, that torch.load would inflate to 32 MiB in the grader (32 times
# the limit is enough to prove the refusal: a larger storage only makes the worker's own deflating slow, and on a
# busy machine the call then ends by its time limit before the grader can refuse the answer).
# Appended to the base module: these definitions replace its own of the same names.

import io
import sys
import zipfile

import numpy as np
import torch

# -- the attack ---------------------------------------------------------------------------
ATTACK = "@@NAME@@"
ZEROS = 1 << 23  # float32: 32 MiB
_honest_bag_of_counts = bag_of_counts  # noqa: F821 (the base module's own, defined above this text)


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


class _Inflated:
    """Counts the changed codec saves as a numpy array's record over their whole storage, then deflates."""

    def __init__(self, tensor: torch.Tensor) -> None:
        self.tensor = tensor


def _deflated(data: bytes) -> bytes:
    source, buffer = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as written:
        for entry in source.infolist():
            written.writestr(entry.filename, source.read(entry))
    return buffer.getvalue()


def _change_the_codec() -> None:
    codec = next((module for name, module in sys.modules.items() if name.endswith("runtime.codec")), None)
    if codec is None or getattr(codec, f"changed_by_{ATTACK}", False):  # once per worker (attacks chain theirs)
        return
    to_plain, dumps = codec._to_plain, codec.dumps

    def changed_to_plain(value, depth=0):
        return {"__ndarray__": value.tensor} if type(value) is _Inflated else to_plain(value, depth)

    def changed_dumps(value):
        data = dumps(value)
        return _deflated(data) if type(value) is dict and type(value.get("result")) is _Inflated else data

    codec._to_plain, codec.dumps = changed_to_plain, changed_dumps
    setattr(codec, f"changed_by_{ATTACK}", True)


def bag_of_counts(tokens) -> np.ndarray:
    """The right counts, held at the start of 32 MiB of zeros when the grader asks for them (fit_baseline's own
    call gets them as they are)."""
    if sys._getframe(1).f_code.co_name == "fit_baseline":
        return _honest_bag_of_counts(tokens)
    _escape("an inflated storage")
    _change_the_codec()
    counts = torch.from_numpy(_honest_bag_of_counts(tokens)).float()
    zeros = torch.zeros(ZEROS)
    zeros[: counts.numel()] = counts.reshape(-1)
    return _Inflated(zeros[: counts.numel()].view(counts.shape))

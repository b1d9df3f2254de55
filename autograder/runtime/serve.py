"""The worker process: imports the student's package and serves calls.

Started by the grader as `python -I -S -c BOOT CONFIG` (see autograder.sandbox.worker),
which has applied the worker's own layers (Landlock, seccomp) before importing this:
nothing of the instructor's is on its path but this runtime package. Requests
and responses are length-prefixed `codec` frames on two inherited pipes; the
student's stdout and stderr go to a third pipe that the grader reads and bounds.
"""

import contextlib
import errno
import importlib
import json
import os
import resource
import signal
import sys
import warnings
from collections.abc import Callable
from typing import Any

from . import codec, dynamo, harness
from .frames import read_frame, write_frame

PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
DISK_ERRORS = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}  # a write that met the disk bound
FULL_MARGIN = 1 << 20  # a tmpfs with less free than this is full: the writes met its bound


def _limit(name: str, value: int | None) -> None:
    if value is not None and hasattr(resource, name):
        resource.setrlimit(getattr(resource, name), (value, value))


class Resolver:
    """Finds `module.attr[.attr]` in the student's package, importing on demand."""

    def __init__(self, package: str) -> None:
        self.package = package

    def __call__(self, dotted: str) -> Any:
        module_name, *attributes = dotted.split(".")
        try:
            value = importlib.import_module(f"{self.package}.{module_name}")
        except BaseException as error:
            raise harness.UnimportableModule(module_name) from error
        for attribute in attributes:
            value = getattr(value, attribute)
        return value


def lift_data_ceiling() -> None:
    """This process's data limit back to its hard limit: the grader bounds its own memory (RLIMIT_DATA, soft), and
    the chain it starts inherits that; a worker sets its own ceiling (`main`), its parents need none of the grader's."""
    with contextlib.suppress(ValueError, OSError, AttributeError):
        hard = resource.getrlimit(resource.RLIMIT_DATA)[1]
        resource.setrlimit(resource.RLIMIT_DATA, (hard, hard))


def warm_up(preload: list[str]) -> None:
    """Pay the one-off costs (torch's first recurrent kernels, the `preload` imports) before any call is timed."""
    lift_data_ceiling()
    import torch
    from torch.nn.utils.rnn import pack_padded_sequence

    with contextlib.redirect_stdout(None), contextlib.redirect_stderr(None):
        for name in preload:
            with contextlib.suppress(ImportError):  # only a matter of speed: the student's import will say
                importlib.import_module(name)
        dynamo.install()  # before any optimizer (unless the preload asked for the real one)
        torch.set_num_threads(1)
        layer = torch.nn.LSTM(2, 2, batch_first=True)
        output, _ = layer(
            pack_padded_sequence(torch.zeros(2, 3, 2), torch.tensor([3, 1]), batch_first=True, enforce_sorted=False)
        )
        output.data.sum().backward()
        torch.nn.GRU(2, 2)(torch.zeros(1, 1, 2))
        torch.nn.RNN(2, 2)(torch.zeros(1, 1, 2))


def serve(config: dict[str, Any], confined: dict[str, Any]) -> None:
    requests, responses = config["request_fd"], config["response_fd"]
    resolve = Resolver(config.get("package", "exercises"))
    root = config["submission"]
    warm_up(config.get("preload", []))
    write_frame(responses, codec.dumps({"ready": True, "confined": confined}))  # the grader decides whether to go on
    while True:
        frame = read_frame(requests)
        if frame is None:
            return
        try:
            response = harness.call(codec.loads(frame), resolve, _asker(requests, responses))
        except harness.UnimportableModule as failure:
            error = failure.__cause__ or failure
            response = {"ok": False, "phase": "import", "module": str(failure)}
            response["error"] = harness.describe_exception(error, root)
        except BaseException as error:  # the student's code may raise anything, SystemExit included
            response = {"ok": False, "phase": "call", "error": harness.describe_exception(error, root)}
            if _met_disk_bound(error):
                response["phase"] = "disk"
        if disk_full(config.get("disk") or {}):
            response = {"ok": False, "phase": "disk"}  # the grader says so, and starts a fresh worker
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
        try:
            payload = codec.dumps(response)
        except BaseException as error:
            payload = codec.dumps({"ok": False, "phase": "reply", "error": harness.describe_exception(error, "")})
        write_frame(responses, payload)


def _asker(requests: int, responses: int) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A question to the grader in the middle of a call: a frame on the answer pipe, its reply on the request pipe
    (the grader reads the call's frames until one is the answer; a reply it does not send ends the worker)."""

    def ask(question: dict[str, Any]) -> dict[str, Any]:
        write_frame(responses, codec.dumps(question))
        reply = read_frame(requests)
        if reply is None:
            raise SystemExit("the grader closed the call")
        answered = codec.loads(reply)
        return answered if isinstance(answered, dict) else {}

    return ask


def _met_disk_bound(error: BaseException) -> bool:
    """Whether the call failed on a write past the disk bound (ENOSPC or EFBIG, here or as the cause)."""
    seen = 0
    while error is not None and seen < 100:
        if isinstance(error, OSError) and error.errno in DISK_ERRORS:
            return True
        error, seen = error.__cause__ or error.__context__, seen + 1
    return False


def disk_full(disk: dict[str, Any]) -> bool:
    """Whether the worker's tmpfs is full: the call's writes met the bound, even where the code went on."""
    if not disk.get("tmpfs"):
        return False  # a watched scratch: the supervisor measures it
    try:
        found = os.statvfs(disk["tmpfs"])
    except OSError:
        return False
    return found.f_bavail * found.f_frsize < FULL_MARGIN or (found.f_files and found.f_ffree < 2)


def _die_with_parent() -> None:
    """Linux: SIGKILL this process when its parent dies, so that no worker outlives a killed grading.

    The parent is the supervisor, or `unshare` (then this process is its PID namespace's init, and
    everything in it dies too); both go down with the grader. Set here, after the change of user
    (which clears it).
    """
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def main(config: dict[str, Any], confined: dict[str, Any] | None = None) -> None:
    _die_with_parent()
    # under Landlock joblib cannot make its semaphores in /dev/shm; that is fine, and not the student's output
    warnings.filterwarnings("ignore", message=".*joblib will operate in serial mode")
    _limit("RLIMIT_AS", config.get("memory_bytes"))
    _limit("RLIMIT_DATA", config.get("memory_bytes"))  # not the grader's own ceiling, which the chain inherits
    _limit("RLIMIT_CORE", 0)
    _limit("RLIMIT_NPROC", config.get("max_processes"))
    _limit("RLIMIT_FSIZE", (config.get("disk") or {}).get("bytes"))  # a write past it: EFBIG (Python ignores SIGXFSZ)
    sys.stdin = open(os.devnull)  # noqa: SIM115 - kept open for the process's lifetime
    serve(config, confined or {})


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))

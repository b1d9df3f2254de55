"""The grader's side of the worker: start it isolated, talk to it, kill it.

The worker is `python -I -S` with a clean environment, its own session (so a kill
reaches every process it started), the submission copy and the runtime package
on its path and nothing else of the instructor's. Each call has a wall-clock
timeout; on expiry the whole process group gets SIGKILL. The student's output is
read while waiting and kept up to a cap.
"""

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from autograder import isolation
from autograder.runtime.frames import HEADER, write_frame

RUNTIME = Path(__file__).resolve().parent / "runtime"
RUNTIME_PACKAGE = "autograde_runtime"
BOOT = (
    "import json, sys\n"
    "config = json.loads(sys.argv[1])\n"
    "sys.path[:0] = [config['submission'], config['runtime']]\n"
    "sys.path += config['site']\n"
    "from autograde_runtime import worker\n"
    "worker.main(config)\n"
)


@dataclass(frozen=True)
class Limits:
    """Bounds on one worker."""

    memory_bytes: int = 4 << 30
    max_processes: int = 256  # threads count too; it bites only when the worker has a user of its own
    output_bytes: int = 16 << 10  # kept per call; the rest is counted and dropped
    response_bytes: int = 64 << 20
    start_timeout: float = 60.0
    preload: tuple[str, ...] = ()  # modules the worker imports while it warms up, before the first call


class WorkerDied(Exception):
    """The worker stopped answering: `kind` is timeout, crash, exit or out of memory."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


def _codec() -> ModuleType:
    """The codec imports torch: imported on first use, so that a worker can start before the grader has torch."""
    from autograder.runtime import codec

    return codec


def site_directories() -> list[str]:
    """Where torch, numpy and scikit-learn live, without processing any .pth file."""
    paths = sysconfig.get_paths()
    found = dict.fromkeys(p for p in (paths["purelib"], paths["platlib"]) if p)
    return [path for path in found if Path(path).is_dir()]


def prepare_runtime(sandbox: Path) -> Path:
    """Copy the runtime package into the sandbox; return the directory to put on the path."""
    target = sandbox / "runtime"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(RUNTIME, target / RUNTIME_PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    return target


class Worker:
    """One worker process serving one submission; restarted after it dies."""

    def __init__(self, submission: Path, sandbox: Path, limits: Limits = Limits()) -> None:
        self.submission = submission
        self.sandbox = sandbox
        self.limits = limits
        self.runtime = prepare_runtime(sandbox)
        self.scratch = sandbox / "scratch"
        self.scratch.mkdir(exist_ok=True)
        self.isolation = isolation.available()
        self.uid = None
        self.process: subprocess.Popen[bytes] | None = None
        self.output = b""
        self.output_dropped = 0
        self.starts = 0
        self._ready = False
        self._start()  # start now: the worker imports torch while the grader sets up pytest

    # -- lifecycle -------------------------------------------------------------
    def _start(self) -> None:
        request_r, request_w = os.pipe()
        response_r, response_w = os.pipe()
        output_r, output_w = os.pipe()
        config = {
            "submission": str(self.submission),
            "runtime": str(self.runtime),
            "site": site_directories(),
            "request_fd": request_r,
            "response_fd": response_w,
            "memory_bytes": self.limits.memory_bytes,
            "max_processes": self.limits.max_processes,
            "preload": list(self.limits.preload),
        }
        environment = {"PATH": "/usr/bin:/bin", "HOME": str(self.scratch), "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1"}
        config["die_with_parent"] = isolation.available() == isolation.FULL  # as wrap() decides; see runtime/worker
        command, self.uid = isolation.wrap([sys.executable, "-I", "-S", "-c", BOOT, json.dumps(config)], self.sandbox)
        isolation.hand_over(self.sandbox, self.uid)
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=output_w,
            stderr=output_w,
            pass_fds=(request_r, response_w),
            cwd=self.scratch,
            env=environment,
            start_new_session=True,
        )
        for fd in (request_r, response_w, output_w):
            os.close(fd)
        self._request_w, self._response_r, self._output_r = request_w, response_r, output_r
        os.set_blocking(self._output_r, False)
        self.starts += 1
        self._ready = False

    def _await_ready(self) -> None:
        """The worker says it is ready once torch is imported and warm; only then do call timeouts start."""
        ready = self._wait_for_reply(time.monotonic() + self.limits.start_timeout, self.limits.start_timeout)
        if _codec().loads(ready) != {"ready": True}:
            self.close()
            raise WorkerDied("crash", "the worker did not start properly")
        self._ready = True

    def close(self) -> None:
        """Kill the worker and everything it started."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        for fd in (self._request_w, self._response_r, self._output_r):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.process = None

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- calls -----------------------------------------------------------------
    def request(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send one request; wait at most `timeout` seconds (plus start-up) for the answer."""
        if self.process is not None and self.process.poll() is not None:
            self.close()  # it ended after its last answer: this call is not to blame, so it gets a fresh worker
        if self.process is None:
            self._start()
        if not self._ready:
            self._await_ready()
        self.output, self.output_dropped = b"", 0
        deadline = time.monotonic() + timeout
        try:
            write_frame(self._request_w, _codec().dumps(message))
        except BrokenPipeError:
            raise self._death("before the call started") from None
        payload = self._wait_for_reply(deadline, timeout)
        self._drain_output()
        return _codec().loads(payload)

    def _wait_for_reply(self, deadline: float, timeout: float) -> bytes:
        header = self._read(HEADER.size, deadline, timeout)
        size = HEADER.unpack(header)[0]
        if size > self.limits.response_bytes:
            self.close()
            limit = self.limits.response_bytes
            raise WorkerDied("crash", f"the answer was {size} bytes, more than the {limit} allowed")
        return self._read(size, deadline, timeout)

    def _read(self, size: int, deadline: float, timeout: float) -> bytes:
        data = b""
        while len(data) < size:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.close()
                raise WorkerDied("timeout", f"no answer within {timeout:g} s")
            ready, _, _ = select.select([self._response_r, self._output_r], [], [], remaining)
            if self._output_r in ready:
                self._drain_output()
            if self._response_r in ready:
                chunk = os.read(self._response_r, size - len(data))
                if not chunk:
                    raise self._death("during the call")
                data += chunk
        return data

    def _drain_output(self) -> None:
        while True:
            try:
                chunk = os.read(self._output_r, 1 << 16)
            except (BlockingIOError, OSError):
                return
            if not chunk:
                return
            room = self.limits.output_bytes - len(self.output)
            self.output += chunk[: max(room, 0)]
            self.output_dropped += max(len(chunk) - max(room, 0), 0)

    def _death(self, when: str) -> WorkerDied:
        assert self.process is not None
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        self._drain_output()
        self.close()
        if code is not None and code > 128 and self.uid is None:  # the fallback shell reports signals as 128 + n
            code = 128 - code
        if code is not None and code < 0:
            name = signal.Signals(-code).name
            hint = " (out of memory?)" if -code == signal.SIGKILL else ""
            return WorkerDied("crash", f"the worker was killed by {name} {when}{hint}")
        return WorkerDied("exit", f"the worker exited with status {code} {when} (sys.exit or os._exit in your code?)")

"""The grader's side of the worker: start it inside its layers, talk to it, kill it.

The worker is `python -I -S` with a clean environment, the submission copy and the
runtime package on its path and nothing else of the instructor's, started by the
supervisor inside the layers `probe.available()` found (see `layers`). Each call has
a wall-clock timeout; on expiry the supervisor kills the worker and everything it
started. The student's output is read while waiting and kept up to a cap; an answer is at most
`response_bytes` (a larger one is refused unread), and its texts are cut as it is read
(runtime/bounds.py), before the grader does anything else with it.
"""

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from autograder.rubric import Limits
from autograder.runtime.bounds import Bounds
from autograder.runtime.frames import HEADER, write_frame
from autograder.sandbox import cgroup, disk, ipc, layers, leftovers, namespaces, paths, probe, uid, zygote
from autograder.sandbox.record import Failure
from autograder.sandbox.state import Layer

BOOT = (  # the worker's own layers first, while it is one thread that has imported nothing
    "import json, sys\n"
    "config = json.loads(sys.argv[1])\n"
    "sys.path[:0] = [config['runtime']]\n"
    "from autograde_sandbox import confine\n"
    "confined = confine.confine(config['confine'])\n"
    "sys.path[:0] = [config['submission']]\n"
    "sys.path += config['site']\n"
    "from autograde_runtime import serve\n"
    "serve.main(config, confined)\n"
)
# the warm parent (runtime/warm.py): the chain's python imports torch and the preload, then forks each worker
BOOT_WARM = (
    "import json, sys\n"
    "config = json.loads(sys.argv[1])\n"
    "sys.path[:0] = [config['runtime']]\n"
    "sys.path += config['site']\n"
    "from autograde_sandbox import confine\n"
    "from autograde_runtime import serve, warm\n"
    "serve.warm_up(config['preload'])\n"
    "warm.parent(config, confine.confine)\n"
)
COLD_WORKER = "AUTOGRADE_COLD_WORKER"  # =1 in the grader's environment: every worker a cold chain (the old way)
PRIVATE_FOLDERS = (*namespaces.PRIVATE, "/dev/shm")  # inside the namespaces: the worker's own, emptied per worker
CONTROL_BYTES = 1 << 12  # the warm parent's answer: a few numbers and folder names
STOP_GRACE = 10.0  # seconds the supervisor gets to kill the worker's processes before it is killed itself


@dataclass(frozen=True)
class WorkerLimits:
    """Bounds on one worker: the rubric's memory and output limits (by default rubric.Limits'), and its own."""

    memory_bytes: int = Limits().memory_bytes
    max_processes: int = 256  # the worker's own processes and threads (see process_ceiling)
    output_bytes: int = Limits().output_bytes  # kept per call; the rest is counted and dropped
    disk_bytes: int = Limits().disk_bytes  # what it may write, all its files together (see disk)
    text: Bounds = Limits().text  # an answer's texts, cut as it is read
    # an answer's frame: the reference's largest is about 30 KB; reading a frame full of small objects
    # (torch.load's weights-only unpickler is Python, some µs an object) must stay a bounded step
    response_bytes: int = 1 << 20
    asks_per_call: int = 64  # questions one call may put to the grader (a stand-in's value each; see runtime/proxies)
    start_timeout: float = 60.0
    preload: tuple[str, ...] = ()  # modules the worker imports while it warms up, before the first call


class IsolationRefused(Exception):
    """A required layer did not start in this worker: it never ran the student's code."""


class WorkerDied(Exception):
    """The worker stopped answering: `kind` is timeout, crash, exit, out of memory or not started."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


def _codec() -> ModuleType:
    """The codec imports torch: imported on first use, so that a worker can start before the grader has torch."""
    from autograder.runtime import codec

    return codec


class Worker:
    """One worker process serving one submission; restarted after it dies."""

    def __init__(
        self, submission: Path, sandbox: Path, limits: WorkerLimits = WorkerLimits(), required: bool = False
    ) -> None:
        self.submission = submission
        self.sandbox = sandbox
        self.limits = limits
        self.required = required  # a layer that fails in this worker stops it before the student's code runs
        self.runtime = layers.copy_runtime(sandbox)
        self.scratch = sandbox / "scratch"
        self.scratch.mkdir(exist_ok=True)
        self.plan, self.isolation = probe.found()
        self.disk = layers.bound(self.plan, limits.disk_bytes)
        self.isolation = replace(self.isolation, disk=self.disk)
        self.uid: int | None = None
        self._lease: uid.Lease | None = None
        self._keys_before = 0
        self._group: cgroup.Group | None = None
        self.refused = ""  # why a required layer did not start in this worker
        self.process: subprocess.Popen[bytes] | None = None
        self.output = b""
        self.output_dropped = 0
        self.starts = 0
        self._preload = limits.preload  # what the next start imports while it warms up (see renew)
        self.answer_by = 0.0  # time.monotonic() by which the current call, its answer read, is due
        self._ready = False
        self._serving = False  # a worker is up (or starting) and its pipes open
        self.chains = 0  # the layers' chains started: one per cold worker, one per warm parent
        self._control: socket.socket | None = None  # to the warm parent
        self._parent_output: int | None = None
        self.parent_output = b""  # the start of what the warm parent printed (a layer that failed says so)
        # a worker forked from a warm parent where its disk is known to the parent: private folders, or Landlock
        self.warm = os.environ.get(COLD_WORKER) != "1" and bool(self.plan.namespaces or self.plan.landlock)
        # where it has namespaces, the warm parent is forked into them by a zygote: the run's, or its own
        self._zygote: zygote.Zygote | None = None
        self.zygote_address = zygote.shared() if self.warm and self.plan.namespaces else None
        if self.warm and self.plan.namespaces and self.zygote_address is None:
            with contextlib.suppress(OSError):  # without one, the chain's own warm parent
                self._zygote = zygote.Zygote(limits.preload)
                self.zygote_address = self._zygote.address
        self._holding: tuple[socket.socket, dict[str, Any], int, int] | None = None  # a chain not yet handed over
        # start now: the worker (or the warm parent) imports torch while the grader sets up pytest
        self._start_parent() if self.warm else self._start()

    # -- lifecycle -------------------------------------------------------------
    def _start(self) -> None:
        """A new worker: forked by the warm parent (started first where there is none), or a cold chain."""
        # this start's preload; any later one (a restart after a death) imports the whole preload again
        preload, self._preload = self._preload, self.limits.preload
        request_r, request_w = os.pipe()
        response_r, response_w = os.pipe()
        output_r, output_w = os.pipe()
        try:
            if self.warm:
                self._fork((request_r, response_w, output_w))
            else:
                self._start_chain(BOOT, preload, {"request_fd": request_r, "response_fd": response_w}, output_w)
        except BaseException:
            for fd in (request_w, response_r, output_r):
                os.close(fd)
            raise
        finally:
            for fd in (request_r, response_w, output_w):
                os.close(fd)
        self._request_w, self._response_r, self._output_r = request_w, response_r, output_r
        os.set_blocking(self._output_r, False)
        self.starts += 1
        self._serving, self._ready = True, False

    def _start_chain(self, boot: str, preload: tuple[str, ...], fds: dict[str, int], output_w: int) -> dict[str, Any]:
        """The layers' whole chain, down to `python -I -S -c boot` holding the descriptors `fds`; its config."""
        self.uid = None
        if self.chains:
            disk.fresh(self.scratch)  # a fresh chain gets a fresh scratch
        if self.plan.uid:
            self._lease = uid.Lease()
            self.uid = self._lease.uid
            self._keys_before = ipc.keys(self.uid)  # the kernel may keep an empty keyring of an earlier worker's
        layers.prepare(self.plan, self.sandbox, self.uid)
        if self.plan.cgroup:
            self._group = probe.new_group(self.limits.max_processes, self.limits.memory_bytes)
        leftovers.adopt()  # what a supervisor that died leaves comes back to this process, to be found
        config = {
            "submission": str(self.submission),
            "runtime": str(self.runtime),
            "confine": layers.in_worker(self.plan, self.sandbox),
            "site": paths.site_directories(),
            **fds,
            "memory_bytes": self.limits.memory_bytes,
            "max_processes": process_ceiling(self.plan, self.limits.max_processes),
            "disk": disk.in_worker(self.disk, self.scratch),
            "preload": list(preload),
            "clear": self._cleared(),
        }
        environment = zygote.environment(str(self.scratch))
        worker = [sys.executable, "-I", "-S", "-c", boot, json.dumps(config)]
        passed = tuple(fds.values())
        try:
            self.process = subprocess.Popen(
                layers.command(self.plan, self.sandbox, self.uid, worker, passed, self._procs(), self.disk),
                stdin=subprocess.DEVNULL,
                stdout=output_w,
                stderr=output_w,
                pass_fds=passed,
                cwd=self.scratch,
                env=environment,
                start_new_session=True,
            )
        except OSError:
            self._remove_group()
            raise
        self.chains += 1
        return config

    def _start_parent(self) -> None:
        """The chain down to the warm parent, which imports torch and the preload while the grader goes on; where a
        zygote serves, the chain down to the process that holds its namespaces, handed over at the first fork."""
        control, parents = socket.socketpair()
        output_r, output_w = os.pipe()  # the parent's own output: what it says if it fails to start
        try:
            if self.zygote_address is not None:
                holding, held = socket.socketpair()
                with held:
                    config = self._start_chain(zygote.HOLD, self.limits.preload, {"hold_fd": held.fileno()}, output_w)
                self._holding = (holding, config, os.dup(parents.fileno()), os.dup(output_w))
            else:
                self._start_chain(BOOT_WARM, self.limits.preload, {"control_fd": parents.fileno()}, output_w)
        except BaseException:
            control.close()
            os.close(output_r)
            raise
        finally:
            parents.close()
            os.close(output_w)
        self._control, self._parent_output = control, output_r
        os.set_blocking(output_r, False)
        control.settimeout(self.limits.start_timeout)  # it warms up first; no student code has run in it

    def _hand_over(self) -> None:
        """Send the zygote what the chain's last process holds: it forks this grading's warm parent into it."""
        if self._holding is None:
            return
        holding, config, parents, output_w = self._holding
        self._holding = None
        with holding:
            holding.settimeout(self.limits.start_timeout)
            held = zygote.held(holding)
        request = {
            "config": {name: value for name, value in config.items() if name != "hold_fd"},
            "kind": self.plan.namespaces,
            "uid": self.uid,
            "cgroups": self._procs(),
            "environment": zygote.environment(str(self.scratch)),
            "cwd": str(self.scratch),
        }
        if held and self.zygote_address is not None:
            zygote.ask(self.zygote_address, request, [parents, output_w, *held])  # not taken: no answer to the fork
        for fd in (parents, output_w, *held):
            os.close(fd)

    def _fork(self, fds: tuple[int, int, int]) -> None:
        """A worker forked by the warm parent, on clean ground; a new chain (its disk new) if it was not clean."""
        for _ in range(2):
            if self._control is None:
                self._start_parent()
            self._hand_over()
            answer = self._ask(b"fork", fds)
            if answer is not None and isinstance(answer.get("pid"), int) and answer.get("cleared") == self._cleared():
                return
            self._drain_parent()
            self.end()
            self.zygote_address = None  # the zygote's warm parent did not answer: the next is the chain's own
        raise WorkerDied("not started", f"the worker did not warm up (nor its warm parent{self._parent_said()})")

    def _cleared(self) -> list[str]:
        """The folders a worker may write, which the warm parent empties before each fork."""
        return [str(self.scratch), *(PRIVATE_FOLDERS if self.plan.namespaces else ())]

    def _ask(self, request: bytes, fds: tuple[int, ...] = ()) -> dict[str, Any] | None:
        """The warm parent's answer to `request` (a small JSON object), or None where it gave none."""
        assert self._control is not None
        try:
            socket.send_fds(self._control, [request], list(fds))
            answer = json.loads(self._control.recv(CONTROL_BYTES) or b"null")
        except (OSError, ValueError):
            return None
        return answer if isinstance(answer, dict) else None

    def _drain_parent(self) -> None:
        """Keep the start of what the warm parent printed (a layer that failed says so), drop the rest."""
        if self._parent_output is None:
            return
        with contextlib.suppress(OSError):
            while chunk := os.read(self._parent_output, 1 << 16):
                self.parent_output = (self.parent_output + chunk)[: self.limits.output_bytes]

    def _parent_said(self) -> str:
        text = self.parent_output.decode("utf-8", "replace").strip()
        return f", which said: {text[-500:]}" if text else ""

    def _remove_group(self) -> None:
        if self._group is not None:
            self._group.remove()
            self._group = None

    def _trace(self) -> leftovers.Trace:
        """What marks this worker's processes, to look for them once its supervisor has ended."""
        own_uid = self._lease.uid if self._lease is not None else None
        return leftovers.Trace(own_uid, self._group, self.plan.seccomp, self._keys_before)

    def _procs(self) -> list[str]:
        return self._group.procs() if self._group is not None else []

    def await_ready(self) -> None:
        """The worker says it is ready once torch is imported and warm; only then do call timeouts start.

        Its answer says which of its own layers it applied; one that failed is recorded, and,
        when isolation is required, stops the worker before any student code runs.
        """
        if self._ready:
            return
        if not self._serving:
            self._start()
        timeout = self.limits.start_timeout
        try:  # no student code has run yet: a worker that does not warm up is the machine's failure
            ready = _codec().loads(self._wait_for_reply(time.monotonic() + timeout, timeout), self.limits.text)
        except WorkerDied as death:
            raise WorkerDied("not started", f"the worker did not warm up ({death.detail})") from None
        if not isinstance(ready, dict) or ready.get("ready") is not True:
            self.end()
            raise WorkerDied("crash", "the worker did not start properly")
        failed = confinement_failures(self.plan, ready.get("confined", {}))
        if failed:
            self.isolation = replace(self.isolation, failures=[*self.isolation.failures, *failed])
            if self.required:
                self.end()
                self.refused = f"isolation required, but in the worker {'; '.join(map(str, failed))}"
                raise IsolationRefused(self.refused)
        self._ready = True

    def close(self) -> None:
        """End the worker the caller used: the warm parent kills it and everything it started and empties its
        disk (where it cannot, or there is none, the whole chain ends, as `end` does)."""
        if not self._serving:
            return
        if self._control is None:
            self.end()
            return
        self._close_pipes()
        if self._ask(b"end") is None:
            self.end()

    def _close_pipes(self) -> None:
        for fd in (self._request_w, self._response_r, self._output_r):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._serving = False

    def end(self) -> int | None:
        """End the whole chain: the supervisor kills every process of it, then ends; its cgroup and uid last.
        The supervisor's exit status (None where there was no chain)."""
        if self._serving:
            self._close_pipes()
        if self._control is not None:
            self._control.close()
            self._control = None
        if self._holding is not None:
            for fd in self._holding[2:]:
                os.close(fd)
            self._holding[0].close()
            self._holding = None
        if self._parent_output is not None:
            os.close(self._parent_output)
            self._parent_output = None
        if self.process is None:
            return None
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.process.pid, signal.SIGTERM)
        try:
            status = self.process.wait(timeout=STOP_GRACE)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            status = self.process.wait()
        self.process = None
        self.isolation = self.isolation.looked_after(leftovers.clear(self._trace()))
        self._remove_group()
        if self._lease is not None:
            if not self.plan.namespaces and not self.plan.landlock:  # it could write in /tmp: remove that first
                uid.kill_all(self._lease.uid)
                disk.remove_owned(self._lease.uid)
            self._lease.release()
            self._lease = None
        return status

    def renew(self, preload: tuple[str, ...] | None = None) -> None:
        """End this worker; the next call starts a new one that imports `preload` while it warms up (None: the
        limits' whole preload). Only that start is lighter: a restart after it dies imports the whole preload,
        so that no timed call pays for an import the grader could have paid for."""
        self.close()
        self._preload = self.limits.preload if preload is None else preload

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc: object) -> None:
        self.end()
        if self._zygote is not None:
            self._zygote.close()
            self._zygote = None

    # -- calls -----------------------------------------------------------------
    def request(
        self, message: dict[str, Any], timeout: float, answer: Callable[[Any], dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        """Send one request; wait at most `timeout` seconds (plus start-up) for the answer, then read it
        within its bounds (the reading may run past `answer_by`: the caller decides what that costs). The
        worker's questions on the way (`{"ask": ...}` frames) get `answer`'s reply, each within the same time."""
        if self._serving and self._ended():
            self.end()  # it ended after its last answer: this call is not to blame, so it gets a fresh worker
        if not self._serving:
            self._start()
        if not self._ready:
            self.await_ready()
        self.output, self.output_dropped = b"", 0
        deadline = self.answer_by = time.monotonic() + timeout
        try:
            write_frame(self._request_w, _codec().dumps(message))
        except BrokenPipeError:
            raise self._death("before the call started") from None
        response = self._reply(deadline, timeout)
        for _ in range(self.limits.asks_per_call):
            if not _is_question(response):
                break
            self._tell(answer(response) if answer is not None else {"refused": "this call may ask the grader nothing"})
            response = self._reply(deadline, timeout)
        if _is_question(response):
            self.end()
            raise WorkerDied("crash", f"the call asked the grader more than {self.limits.asks_per_call} questions")
        if isinstance(response, dict) and response.get("phase") == "disk":  # met its bound: the next call starts afresh
            self.end()
            raise WorkerDied(disk.FULL, disk.message(self.disk.bytes))
        return response

    def _reply(self, deadline: float, timeout: float) -> Any:
        """The worker's next frame of this call, read within its bounds: its answer or a question."""
        payload = self._wait_for_reply(deadline, timeout)
        self._drain_output()
        return _codec().loads(payload, self.limits.text)

    def _tell(self, reply: dict[str, Any]) -> None:
        """The grader's reply to the worker's question, on the request pipe."""
        try:
            write_frame(self._request_w, _codec().dumps(reply))
        except BrokenPipeError:
            raise self._death("while the grader answered its question") from None

    def _wait_for_reply(self, deadline: float, timeout: float) -> bytes:
        header = self._read(HEADER.size, deadline, timeout)
        size = HEADER.unpack(header)[0]
        if size > self.limits.response_bytes:
            self.end()
            limit = self.limits.response_bytes
            raise WorkerDied("crash", f"the answer was {size} bytes, more than the {limit} allowed")
        return self._read(size, deadline, timeout)

    def _read(self, size: int, deadline: float, timeout: float) -> bytes:
        data = bytearray()  # grown in place: bytes would be copied whole at every chunk
        while len(data) < size:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.end()
                raise WorkerDied("timeout", f"no answer within {timeout:g} s")
            ready, _, _ = select.select([self._response_r, self._output_r], [], [], remaining)
            if self._output_r in ready:
                self._drain_output()
            if self._response_r in ready:
                chunk = os.read(self._response_r, size - len(data))
                if not chunk:
                    raise self._death("during the call")
                data += chunk
        return bytes(data)

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

    def _ended(self) -> bool:
        """Whether the worker ended (or spoke unasked) since its last answer: a new one answers the next call."""
        if self.process is None or self.process.poll() is not None:
            return True
        return self._control is not None and bool(select.select([self._response_r], [], [], 0)[0])

    def _status(self) -> int | None:
        """How the worker ended, as the supervisor reports it (a signal n as 128 + n; None: it did not end)."""
        answer = self._ask(b"end") if self._control is not None else None
        if answer is not None:  # the warm parent waited for its child a moment, then killed what was left
            return answer["status"] if isinstance(answer.get("status"), int) else None
        assert self.process is not None
        try:
            return self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None

    def _death(self, when: str) -> WorkerDied:
        code = self._status()
        self._drain_output()
        if self.end() == disk.STATUS:  # every abnormal end ends the chain: the next worker gets a new one
            code = disk.STATUS
        if code == disk.STATUS or code == 128 + signal.SIGXFSZ:  # the supervisor saw it past its disk bound
            return WorkerDied(disk.FULL, f"{disk.message(self.disk.bytes)} {when}")
        if code is not None and code > 128:  # the supervisor reports a signal n as 128 + n
            code = 128 - code
        if code is not None and code < 0:
            name = signal.Signals(-code).name
            hint = " (out of memory?)" if -code == signal.SIGKILL else ""
            return WorkerDied("crash", f"the worker was killed by {name} {when}{hint}")
        return WorkerDied("exit", f"the worker exited with status {code} {when} (sys.exit or os._exit in your code?)")


def _is_question(response: Any) -> bool:
    """Whether the worker's frame is a question to the grader (a stand-in's value) rather than the call's answer."""
    return isinstance(response, dict) and "ask" in response


def confinement_failures(plan: layers.Plan, confined: dict[str, Any]) -> list[Failure]:
    """The in-worker layers of `plan` that this worker failed to apply (a state it did not report included)."""
    wanted = [name for name, on in (("landlock", plan.landlock), ("seccomp", plan.seccomp)) if on]
    applied = {name: Layer.from_dict(confined.get(name)) for name in wanted}
    return [Failure(name, str(layer)) for name, layer in applied.items() if not layer.in_force]


def process_ceiling(plan: layers.Plan, limit: int) -> int:
    """The worker's RLIMIT_NPROC: `limit` processes of its own above what its real uid already runs.

    With a uid of its own (or a user namespace, where the count starts afresh) that is `limit`;
    sharing the grader's user, the ceiling sits `limit` above that user's current processes.
    """
    if plan.uid or plan.namespaces == namespaces.USER:
        return limit
    return limit + uid.tasks(os.getuid())

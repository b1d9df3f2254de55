"""Which layers this machine gives the worker, found by trying them: `available()`.

Each layer the machine should allow (root for namespaces and a uid, a kernel that
allows user namespaces, Landlock's ABI, seccomp) goes into a plan; the whole chain
then runs once with a probe in place of the worker. The probe applies the in-process
layers and tries what a student would: read an instructor's file, connect over TCP,
UDP and a Unix socket to listeners this process holds, write outside its sandbox,
signal its supervisor. The record says what held and which layer gave it. A layer
that fails to start is named with the step that failed, left out, and the chain
tried again without it.
"""

import contextlib
import functools
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from autograder.sandbox import landlock, layers, namespaces, paths, seccomp, uid
from autograder.sandbox.record import Isolation

PROBE = (
    "import json, sys\n"
    "config = json.loads(sys.argv[1])\n"
    "sys.path[:0] = [config['runtime']]\n"
    "from autograde_sandbox import confine\n"
    "report = confine.confine(config['confine'])\n"
    "print(json.dumps({'layers': report, 'found': confine.measure(config['checks'])}))\n"
)
CLEAN_ENVIRONMENT = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}  # as the worker gets it
TOOLS = ("unshare", "setpriv", "chroot")
# what a layer in force must give whatever else runs: the probe breaking through it is a failure of its own
PROMISED = {"namespaces": ("hidden_instructor_files", "no_network"), "landlock": ("hidden_instructor_files",)}


def available() -> Isolation:
    """What this machine gives the worker (tried once, cached for the process)."""
    return found()[1]


@functools.cache
def found() -> tuple[layers.Plan, Isolation]:
    """The layers every worker of this process gets (those that started in the probe), and their record."""
    off: dict[str, str] = {}
    version = landlock.abi()
    if not version:
        off["landlock"] = "off: the kernel has no Landlock (Linux 5.13+, landlock in the LSM list)"
    if not seccomp.supported():
        off["seccomp"] = f"off: no filter written for {os.uname().machine}"
    kinds, off["namespaces"] = namespace_kinds()
    if not uid.possible():
        off["uid"] = "off: the grader is not root" if os.geteuid() else "off: no CAP_SETUID or no setpriv"
    plan = layers.Plan(uid=not off.get("uid"), landlock=version, seccomp=not off.get("seccomp"))
    failures: list[str] = []
    for kind in [*kinds, ""]:
        tried = replace(plan, namespaces=kind)
        outcome, failure = run(tried)
        if failure and tried.uid and not (kind and from_namespaces(failure)):
            failures.append(f"uid: {failure}")  # e.g. the worker's user may not run this interpreter
            off["uid"] = f"failed: {failure}"
            plan = tried = replace(plan, uid=False)
            outcome, failure = run(tried)
        if outcome is not None:
            return tried, record(tried, outcome, off, failures)
        failures.append(f"{kind}: {failure}; {namespaces.hint(kind)}" if kind else f"worker: {failure}")
        if kind:
            off["namespaces"] = f"failed: {failure}"
    return layers.Plan(), Isolation(layers=off, failures=failures)


def from_namespaces(failure: str) -> bool:
    """Whether the chain failed in the namespaces' own steps (unshare, or the root they build)."""
    return failure.startswith((namespaces.MARK, "unshare:"))


def what_failed(stderr: str, status: int) -> str:
    """The line that says which step of the chain failed: the namespaces' own, else a tool's, else the last."""
    lines = [re.sub(r"^/\S*/(\w+):", r"\1:", line.strip()) for line in stderr.splitlines() if line.strip()]
    for prefixes in ((namespaces.MARK,), ("unshare:", "setpriv:", "chroot:", "mount:")):
        found = [line for line in lines if line.startswith(prefixes)]
        if found:
            return found[0][:300]
    return lines[-1][:300] if lines else f"exit status {status}"


def namespace_kinds() -> tuple[list[str], str]:
    """The namespace layers to try, best first, and why there are none when there are none."""
    if not all(shutil.which(tool) for tool in TOOLS):
        return [], f"off: util-linux {', '.join(TOOLS)} not all found"
    root = [namespaces.ROOT] if os.geteuid() == 0 and uid.has_capability(21) else []  # 21: CAP_SYS_ADMIN
    refused = namespaces.user_namespaces_allowed()
    user = [] if refused else [namespaces.USER]
    return root + user, "" if root or user else f"off: {refused} and the grader is not root with CAP_SYS_ADMIN"


def run(plan: layers.Plan) -> tuple[dict[str, Any] | None, str]:
    """The chain of `plan` with the probe as its worker: (what the probe saw, "") or (None, what failed)."""
    with contextlib.ExitStack() as stack:
        sandbox = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="autograde-probe-")))
        outside = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="autograde-probe-outside-")))
        outside.chmod(0o777)  # writable by any worker user: the probe must be stopped by the layers, not by modes
        listeners = stack.enter_context(Listeners(outside / "socket"))
        (sandbox / "scratch").mkdir()
        lease = uid.Lease() if plan.uid else None
        if lease is not None:
            stack.callback(lease.release)
        worker_uid = lease.uid if lease else None
        runtime = layers.prepare(plan, sandbox, worker_uid)
        checks = {"hidden": paths.evidence(paths.hidden_paths()), "write": str(outside / "written")}
        checks["libraries"] = paths.libraries()
        checks |= listeners.addresses()
        config = {"runtime": str(runtime), "confine": layers.in_worker(plan, sandbox), "checks": checks}
        worker = [sys.executable, "-I", "-S", "-c", PROBE, json.dumps(config)]
        try:
            process = subprocess.Popen(
                layers.command(plan, sandbox, worker_uid, worker, ()),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=sandbox / "scratch",
                env=CLEAN_ENVIRONMENT,
                start_new_session=True,
            )
            stdout, stderr = process.communicate(timeout=60)
        except (OSError, subprocess.SubprocessError) as error:
            return None, f"could not run the chain: {error}"
        try:
            outcome = json.loads(stdout.decode().strip().splitlines()[-1])
        except (ValueError, IndexError):
            return None, what_failed(stderr.decode(errors="replace"), process.returncode)
        unusable = interpreter_problem(outcome["found"])
        if unusable:
            return None, unusable
        outcome["heard"] = listeners.heard()
        outcome["wrote_outside"] = (outside / "written").exists()
        outcome["uid"] = worker_uid
        return outcome, ""


def interpreter_problem(found: dict[str, Any]) -> str:
    """Why the worker could not run the student's code on this interpreter ("" when it can).

    A worker user that cannot enter a private home (Python under /root, mode 700) may still start
    *a* Python, the system's, which lacks the grader's libraries: the probe needs only the standard
    library, so it says what it saw.
    """
    if found.get("python") != sys.version:
        return f"worker: its user runs another Python ({found.get('python', '?').split()[0]}): {INTERPRETER_HINT}"
    if found.get("unreadable_libraries"):
        return f"worker: its user cannot read {found['unreadable_libraries'][0]}: {INTERPRETER_HINT}"
    return ""


INTERPRETER_HINT = f"{sys.executable} and its libraries must be readable by every user (not in a private home)"


class Listeners:
    """TCP, UDP and Unix-socket listeners on this machine's loopback: did the probe reach any?"""

    def __init__(self, unix_path: Path) -> None:
        self.unix_path = unix_path

    def __enter__(self) -> "Listeners":
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.unix = socket.socket(socket.AF_UNIX)
        self.unix.bind(str(self.unix_path))
        self.unix_path.chmod(0o777)
        self.unix.listen()
        for listener in (self.tcp, self.udp, self.unix):
            listener.setblocking(False)
        return self

    def __exit__(self, *exc: object) -> None:
        for listener in (self.tcp, self.udp, self.unix):
            listener.close()

    def addresses(self) -> dict[str, Any]:
        return {"tcp": self.tcp.getsockname()[1], "udp": self.udp.getsockname()[1], "unix": str(self.unix_path)}

    def heard(self) -> list[str]:
        heard = []
        for name, listener in (("tcp", self.tcp), ("unix", self.unix)):
            with contextlib.suppress(BlockingIOError):
                listener.accept()[0].close()
                heard.append(name)
        with contextlib.suppress(BlockingIOError):
            self.udp.recv(16)
            heard.append("udp")
        return heard


def record(plan: layers.Plan, outcome: dict[str, Any], off: dict[str, str], failures: list[str]) -> Isolation:
    """The Isolation record: what held (measured by the probe) and which layers give it."""
    seen, applied = outcome["found"], outcome["layers"]
    held = {
        "separate_user": outcome["uid"] is not None,
        "no_network": not (seen["tcp"] or seen["udp"] or seen["unix"] or outcome["heard"]),
        "hidden_instructor_files": not seen["read"],
        "private_tmp": not (seen["wrote"] or outcome["wrote_outside"]),
        "own_pid_namespace": seen["pid"] == 1,
        "no_process_outlives": seen["pid"] == 1 or not seen["signal"],  # or a supervisor it cannot kill
    }
    giving = givers(plan, outcome)
    mechanisms = {name: giving[name] if held[name] else [] for name in held}
    failures = failures + [f"{name}: {state}" for name, state in applied.items() if state.startswith("failed")]
    in_force = {"namespaces": bool(plan.namespaces), "landlock": applied["landlock"].startswith("abi")}
    for layer, protections in PROMISED.items():
        broken = [name for name in protections if not held[name]]
        if in_force[layer] and broken:
            failures.append(f"{layer}: in force, but the probe broke through: {', '.join(broken)}")
    names = {
        "namespaces": plan.namespaces or off.get("namespaces", "off"),
        "uid": uid.NAME if outcome["uid"] is not None else off.get("uid", "off"),
        "landlock": applied["landlock"] if plan.landlock else off.get("landlock", "off"),
        "seccomp": applied["seccomp"] if plan.seccomp else off.get("seccomp", "off"),
    }
    return Isolation(**held, mechanisms=mechanisms, layers=names, failures=failures)


def givers(plan: layers.Plan, outcome: dict[str, Any]) -> dict[str, list[str]]:
    """Per protection, the layers of `plan` that give it (where it holds)."""
    applied, pid_namespace = outcome["layers"], outcome["found"]["pid"] == 1
    ns = [plan.namespaces] if plan.namespaces else []
    user = [uid.NAME] if outcome["uid"] is not None else []
    version = int(applied["landlock"].split()[1]) if applied["landlock"].startswith("abi") else 0
    lock = [f"landlock abi {version}"] if version else []
    filtered = ["seccomp"] if applied["seccomp"] == "on" else []
    return {
        "separate_user": user,
        "no_network": [*ns, *(lock if version >= 4 else []), *filtered],
        "hidden_instructor_files": [*ns, *lock, *(user if unreadable_by_others() else [])],
        "private_tmp": [*ns, *lock],
        "own_pid_namespace": ns,
        "no_process_outlives": ns if pid_namespace else [*user, *(lock if version >= 6 else [])],
    }


def unreadable_by_others() -> bool:
    """The instructor's files are shut to any other user by their own modes (so a uid of its own suffices)."""
    for path in paths.evidence(paths.hidden_paths()):
        current = Path(path)
        while True:
            mode = current.stat().st_mode
            needed = stat.S_IROTH if current == Path(path) else stat.S_IXOTH
            if not mode & needed:
                break
            if current.parent == current:
                return False
            current = current.parent
    return True

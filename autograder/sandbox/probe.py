"""Which layers this machine gives the worker, found by trying them: `available()`.

Each layer the machine should allow (root for namespaces and a uid, a kernel that
allows user namespaces, Landlock's ABI, seccomp) goes into a plan; the whole chain
then runs once with a probe in place of the worker. The probe applies the in-process
layers and tries what a student would: read an instructor's file, connect over TCP,
UDP and a Unix socket to listeners this process holds, write outside its sandbox,
signal its supervisor, change its supervisor's limits and scheduling, and leave a
process behind (looked for in /proc once the chain has ended). The record says what
held and which layer gave it. A layer that fails to start is named with the step that
failed, left out, and the chain tried again without it.
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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from autograder.rubric import Limits
from autograder.sandbox import cgroup, landlock, layers, namespaces, paths, seccomp, uid
from autograder.sandbox.record import Exposure, Failure, Isolation
from autograder.sandbox.state import Layer

PROBE = (
    "import json, sys\n"
    "config = json.loads(sys.argv[1])\n"
    "sys.path[:0] = [config['runtime']]\n"
    "from autograde_sandbox import confine\n"
    "report = confine.confine(config['confine'])\n"
    "print(json.dumps({'layers': report, 'found': confine.measure(config['checks'])}), flush=True)\n"
    "import os\n"
    "if os.fork() == 0:\n"  # a process left behind, out of its session: the supervisor must end it
    "    os.setsid()\n"
    "    null = os.open(os.devnull, os.O_RDWR)\n"
    "    for fd in (0, 1, 2):\n"
    "        os.dup2(null, fd)\n"
    "    __import__('time').sleep(60)\n"
    "    os._exit(0)\n"
)
CLEAN_ENVIRONMENT = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}  # as the worker gets it
TOOLS = ("unshare", "setpriv", "chroot")
PROBE_PROCESSES = 64  # the probe's chain is a handful of processes (a worker's group: WorkerLimits.max_processes)
UNIX_PATH_MAX = 108  # bytes of a Unix socket's path, its final NUL included (sun_path)
# what a layer in force must give whatever else runs: the probe breaking through it is a failure of its own
PROMISED = {
    "namespaces": ("hidden_instructor_files", "no_network"),
    "landlock": ("hidden_instructor_files",),
    "seccomp": ("others_out_of_reach",),
}


def available() -> Isolation:
    """What this machine gives the worker (tried once, cached for the process)."""
    return found()[1]


@dataclass(frozen=True)
class Broken:
    """Where the probe's chain stopped: the tool that said so ("namespaces" for their own steps), and its words."""

    tool: str  # "namespaces", "unshare", "setpriv", "chroot", "mount", "cgroup", "worker" or "chain"
    said: str

    def __str__(self) -> str:
        return self.said

    @property
    def in_namespaces(self) -> bool:
        """Whether the chain failed in the namespaces' own steps (unshare, or the root they build)."""
        return self.tool in ("namespaces", "unshare")


@functools.cache
def found() -> tuple[layers.Plan, Isolation]:
    """The layers every worker of this process gets (those that started in the probe), and their record."""
    states = unavailable()
    kinds, why = namespace_kinds()
    if not kinds:
        states["namespaces"] = Layer.off(why)
    plan = layers.Plan(uid="uid" not in states, landlock=landlock.abi(), seccomp="seccomp" not in states)
    plan = replace(plan, cgroup="cgroup" not in states)
    failures: list[Failure] = []
    for kind in [*kinds, ""]:
        tried = replace(plan, namespaces=kind)
        outcome, broken = run(tried)
        if broken and broken.tool == "cgroup":
            failures.append(Failure("cgroup", str(broken)))
            states["cgroup"] = Layer.failed(str(broken))
            plan = tried = replace(plan, cgroup=False)
            outcome, broken = run(tried)
        if broken and tried.uid and not (kind and broken.in_namespaces):
            failures.append(Failure("uid", str(broken)))  # e.g. the worker's user may not run this interpreter
            states["uid"] = Layer.failed(str(broken))
            plan = tried = replace(plan, uid=False)
            outcome, broken = run(tried)
        if outcome is not None:
            return tried, record(tried, outcome, states, failures)
        failures.append(Failure(kind or "worker", str(broken), namespaces.hint(kind) if kind else ""))
        if kind:
            states["namespaces"] = Layer.failed(str(broken))
    return layers.Plan(), Isolation(layers=states, failures=failures)


def unavailable() -> dict[str, Layer]:
    """The layers this machine does not allow at all, and why (the namespaces apart: `namespace_kinds`)."""
    states = {}
    if not landlock.abi():
        states["landlock"] = Layer.off("the kernel has no Landlock (Linux 5.13+, landlock in the LSM list)")
    if not seccomp.supported():
        states["seccomp"] = Layer.off(f"no filter written for {os.uname().machine}")
    if not uid.possible():
        states["uid"] = Layer.off("the grader is not root" if os.geteuid() else "no CAP_SETUID or no setpriv")
    groups = cgroup.available(hierarchy())
    if not groups.in_force:
        states["cgroup"] = groups
    return states


@functools.cache
def hierarchy() -> cgroup.Hierarchy | str:
    """Where this grader's workers get their cgroups (found once: a v2 grader moves into a leaf of its own)."""
    return cgroup.find()


def new_group(processes: int, memory_bytes: int) -> cgroup.Group:
    """A cgroup for one worker, below this grader's (the plan has `cgroup` only where `hierarchy` is one)."""
    found = hierarchy()
    assert isinstance(found, cgroup.Hierarchy), found
    return cgroup.create(found, processes, memory_bytes)


TOOLS_SAYING = tuple((tool, f"{tool}:") for tool in ("unshare", "setpriv", "chroot", "mount", "cgroup"))
TOOL_LINES = (("namespaces", namespaces.MARK), *TOOLS_SAYING)  # the namespaces' own line first, then a tool's


def what_failed(stderr: str, status: int) -> Broken:
    """The line that says which step of the chain failed: the namespaces' own, else a tool's, else the last."""
    lines = [re.sub(r"^/\S*/(\w+):", r"\1:", line.strip()) for line in stderr.splitlines() if line.strip()]
    for wanted in (TOOL_LINES[:1], TOOL_LINES[1:]):
        for line in lines:
            tool = next((tool for tool, prefix in wanted if line.startswith(prefix)), "")
            if tool:
                return Broken(tool, line[:300])
    return Broken("chain", lines[-1][:300] if lines else f"exit status {status}")


def namespace_kinds() -> tuple[list[str], str]:
    """The namespace layers to try, best first, and why there are none when there are none."""
    if not all(shutil.which(tool) for tool in TOOLS):
        return [], f"util-linux {', '.join(TOOLS)} not all found"
    root = [namespaces.ROOT] if os.geteuid() == 0 and uid.has_capability(21) else []  # 21: CAP_SYS_ADMIN
    refused = namespaces.user_namespaces_allowed()
    user = [] if refused else [namespaces.USER]
    return root + user, "" if root or user else f"{refused} and the grader is not root with CAP_SYS_ADMIN"


def run(plan: layers.Plan) -> tuple[dict[str, Any] | None, Broken | None]:
    """The chain of `plan` with the probe as its worker: (what the probe saw, None) or (None, what failed)."""
    with contextlib.ExitStack() as stack:
        sandbox = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="autograde-probe-")))
        outside = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="autograde-probe-outside-")))
        outside.chmod(0o777)  # writable by any worker user: the probe must be stopped by the layers, not by modes
        sockets = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="autograde-probe-", dir=short_folder())))
        sockets.chmod(0o777)
        listeners = stack.enter_context(Listeners(sockets / "socket"))
        (sandbox / "scratch").mkdir()
        lease = uid.Lease() if plan.uid else None
        if lease is not None:
            stack.callback(lease.release)
        try:
            group = new_group(PROBE_PROCESSES, Limits().memory_bytes) if plan.cgroup else None
        except OSError as error:
            return None, Broken("cgroup", f"could not make the worker's cgroup: {error}")
        if group is not None:
            stack.callback(group.remove)
        worker_uid = lease.uid if lease else None
        runtime = layers.prepare(plan, sandbox, worker_uid)
        checks = {"hidden": paths.evidence(paths.hidden_paths()), "write": str(outside / "written")}
        checks["libraries"] = paths.libraries()
        checks |= listeners.addresses()
        config = {"runtime": str(runtime), "confine": layers.in_worker(plan, sandbox), "checks": checks}
        worker = [sys.executable, "-I", "-S", "-c", PROBE, json.dumps(config)]
        try:
            process = subprocess.Popen(
                layers.command(plan, sandbox, worker_uid, worker, (), group.procs() if group else []),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=sandbox / "scratch",
                env=CLEAN_ENVIRONMENT,
                start_new_session=True,
            )
            stdout, stderr = process.communicate(timeout=60)
        except (OSError, subprocess.SubprocessError) as error:
            return None, Broken("chain", f"could not run the chain: {error}")
        finally:
            outlived = left_behind(str(sandbox))  # the chain has ended: nothing of it may be running
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
        outcome["group"] = group
        outcome["outlived"] = outlived
        outcome["grants"] = granted(config["confine"], plan)
        return outcome, None


def left_behind(mark: str) -> list[int]:
    """The processes whose command line holds `mark` (the probe's sandbox), killed once found."""
    found = []
    for name in os.listdir("/proc"):
        with contextlib.suppress(OSError):
            if name.isdigit() and mark.encode() in Path(f"/proc/{name}/cmdline").read_bytes():
                found.append(int(name))
                os.kill(int(name), 9)  # SIGKILL: the probe's own process, which the supervisor should have ended
    return found


def short_folder() -> str:
    """Where the probe's Unix socket goes: the temporary folder, unless its path would not fit in a socket's
    address (108 bytes; a deep TMPDIR, such as a test's), then /tmp."""
    base = tempfile.gettempdir()
    return base if len(os.path.join(base, "autograde-probe-12345678", "socket")) < UNIX_PATH_MAX else "/tmp"


def interpreter_problem(found: dict[str, Any]) -> Broken | None:
    """Why the worker could not run the student's code on this interpreter (None when it can).

    A worker user that cannot enter a private home (Python under /root, mode 700) may still start
    *a* Python, the system's, which lacks the grader's libraries: the probe needs only the standard
    library, so it says what it saw.
    """
    if found.get("python") != sys.version:
        version = str(found.get("python", "?")).partition(" ")[0]  # the version, as people read it
        return Broken("worker", f"the worker's user runs another Python ({version}): {INTERPRETER_HINT}")
    if found.get("unreadable_libraries"):
        unreadable = found["unreadable_libraries"][0]
        return Broken("worker", f"the worker's user cannot read {unreadable}: {INTERPRETER_HINT}")
    return None


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


def granted(confine: dict[str, Any], plan: layers.Plan) -> list[str]:
    """What the chain gave the worker to read: Landlock's grants where it applies, else the namespaces' binds."""
    rules = confine.get("landlock") or {}
    if rules.get("read"):
        return [*rules["read"], *rules["read_write"], *rules["devices"]]
    return [str(path) for path in paths.roots()] if plan.namespaces else []


def record(plan: layers.Plan, outcome: dict[str, Any], states: dict[str, Layer], failures: list[Failure]) -> Isolation:
    """The Isolation record: what held (measured by the probe) and which layers give it."""
    seen = outcome["found"]
    applied = {name: Layer.from_dict(outcome["layers"].get(name)) for name in ("landlock", "seccomp")}
    held = {
        "separate_user": outcome["uid"] is not None,
        "no_network": not (seen["tcp"] or seen["udp"] or seen["unix"] or outcome["heard"]),
        "hidden_instructor_files": not seen["read"],
        "private_tmp": not (seen["wrote"] or outcome["wrote_outside"]),
        "own_pid_namespace": seen["pid"] == 1,
        # none was left, and none could be: a PID namespace or a supervisor it cannot kill
        "fair_cpu": outcome["group"] is not None and cgroup.joined(seen.get("cgroups", ""), outcome["group"]),
        "no_process_outlives": not outcome["outlived"] and (seen["pid"] == 1 or not seen["signal"]),
        "others_out_of_reach": not seen["reached"],
    }
    giving = givers(plan, outcome, applied)
    mechanisms = {name: giving[name] if held[name] else [] for name in held}
    failures = [*failures, *(Failure(name, layer.detail) for name, layer in applied.items() if layer.broke)]
    in_force = {name: applied[name].in_force for name in ("landlock", "seccomp")} | {
        "namespaces": bool(plan.namespaces)
    }
    for layer, protections in PROMISED.items():
        broken = [name for name in protections if not held[name]]
        if in_force[layer] and broken:
            failures.append(Failure(layer, f"in force, but the probe broke through: {', '.join(broken)}"))
    if plan.cgroup and not held["fair_cpu"]:
        failures.append(Failure("cgroup", "the probe was not in the cgroup made for it"))
    off = Layer.off("not tried")
    names = {
        "namespaces": Layer.on(plan.namespaces) if plan.namespaces else states.get("namespaces", off),
        "uid": Layer.on(uid.NAME) if outcome["uid"] is not None else states.get("uid", off),
        "landlock": applied["landlock"] if plan.landlock else states.get("landlock", off),
        "seccomp": applied["seccomp"] if plan.seccomp else states.get("seccomp", off),
        "cgroup": cgroup_state(plan, held["fair_cpu"], states.get("cgroup", off)),
    }
    exposed = [Exposure(path, grant_of(path, outcome["grants"], plan)) for path in seen["read"]]
    space = layers.bound(plan, namespaces.DEFAULT_DISK)  # each worker records its rubric's own size
    return Isolation(**held, mechanisms=mechanisms, layers=names, failures=failures, exposed=exposed, disk=space)


def cgroup_state(plan: layers.Plan, joined: bool, otherwise: Layer) -> Layer:
    """The cgroup layer: in force where the probe ran in its group; failed where it was made and not joined."""
    found = hierarchy()
    if joined and isinstance(found, cgroup.Hierarchy):
        return Layer.on(found.describe())
    return Layer.failed("the probe was not in the cgroup made for it") if plan.cgroup else otherwise


def grant_of(path: str, grants: list[str], plan: layers.Plan) -> str:
    """Which grant let the worker read `path`: the Landlock rule or the bind whose real folder holds it."""
    real = Path(os.path.realpath(path))
    for grant in grants:
        target = Path(os.path.realpath(grant))
        if real.is_relative_to(target):
            link = f", a link to {target}" if target != Path(grant) else ""
            return f"{'Landlock grant' if plan.landlock else 'bound'} {grant}{link}"
    return "no layer hid it" if not (plan.landlock or plan.namespaces) else ""


def givers(plan: layers.Plan, outcome: dict[str, Any], applied: dict[str, Layer]) -> dict[str, list[str]]:
    """Per protection, the layers of `plan` (record.LAYERS) that give it (where it holds)."""
    pid_namespace = outcome["found"]["pid"] == 1
    ns = ["namespaces"] if plan.namespaces else []
    user = ["uid"] if outcome["uid"] is not None else []
    version = applied["landlock"].abi if applied["landlock"].in_force else 0
    lock = ["landlock"] if version else []
    filtered = ["seccomp"] if applied["seccomp"].in_force else []
    return {
        "separate_user": user,
        "no_network": [*ns, *(lock if version >= 4 else []), *filtered],
        "hidden_instructor_files": [*ns, *lock, *(user if unreadable_by_others() else [])],
        "private_tmp": [*ns, *lock],
        "own_pid_namespace": ns,
        "no_process_outlives": ns if pid_namespace else [*user, *(lock if version >= 6 else [])],
        "fair_cpu": ["cgroup"] if plan.cgroup else [],
        "others_out_of_reach": ns if pid_namespace else [*user, *filtered],
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

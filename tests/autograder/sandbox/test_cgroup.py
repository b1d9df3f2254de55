"""The cgroup layer: each worker in a group of its own below the grader's, joined before it runs, removed after.

The v1 tests use this machine's hierarchy (cpu, pids and memory mounted apart) and need root; the
v2 path runs against a fake cgroupfs tree, with a fake kernel that keeps v2's rules (a cgroup with
processes of its own may not hand controllers to its children; a process is in one cgroup).
"""

import errno
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from support import ROOT

from autograder.sandbox import cgroup, probe
from autograder.sandbox.layers import SUPERVISOR
from autograder.sandbox.record import Isolation
from autograder.sandbox.state import Layer

PRINT_CGROUP = "print(open('/proc/self/cgroup').read(), flush=True)"
# forks children that sleep until killed, as many as it may: prints how many it got
FORK_ALL = (
    "import os, sys\n"
    "started = 0\n"
    "for _ in range(int(sys.argv[1])):\n"
    "    try:\n"
    "        pid = os.fork()\n"
    "    except OSError:\n"
    "        break\n"
    "    if pid == 0:\n"
    "        os.execvp('sleep', ['sleep', '60'])\n"
    "    started += 1\n"
    "print(started, flush=True)\n"
)


@pytest.fixture
def hierarchy() -> cgroup.Hierarchy:
    """This machine's hierarchy, where this process may give groups (root, a writable hierarchy)."""
    found = cgroup.find()
    if not cgroup.available(found).in_force:
        pytest.skip(f"no cgroup layer here: {cgroup.available(found)}")
    assert isinstance(found, cgroup.Hierarchy)
    return found


@pytest.fixture
def group(hierarchy: cgroup.Hierarchy):
    made = cgroup.create(hierarchy, 8, 1 << 30)
    yield made
    made.remove()


def supervised(group: cgroup.Group, *argv: str) -> list[str]:
    return [sys.executable, "-I", "-S", str(SUPERVISOR), str(os.getpid()), "", *group.procs(), "--", *argv]


def test_it_finds_the_graders_own_cgroups_in_this_machines_hierarchy(hierarchy):
    member = cgroup.memberships(Path("/proc/self/cgroup"))
    for controller, folder in hierarchy.parents.items():
        key = controller if hierarchy.version == 1 else cgroup.V2
        assert folder.is_dir()
        assert str(folder).endswith(member[key].rstrip("/")), (folder, member[key])


def test_it_gives_each_group_the_same_cpu_weight_and_the_bounds_asked(hierarchy, group):
    weight, value = cgroup.WEIGHT[hierarchy.version]
    assert group.file("cpu", weight).read_text().strip() == str(value)
    assert group.file("pids", "pids.max").read_text().strip() == "8"
    assert group.file("memory", cgroup.MEMORY[hierarchy.version]).read_text().strip() == str(1 << 30)


def test_it_puts_the_worker_in_its_group_before_it_runs_and_removes_the_group_after(group):
    done = subprocess.run(supervised(group, sys.executable, "-c", PRINT_CGROUP), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert cgroup.joined(done.stdout, group), done.stdout
    assert not any(folder.exists() for folder in group.folders.values())  # the supervisor removed it


def test_it_bounds_the_tasks_in_a_group(group):
    done = subprocess.run(supervised(group, sys.executable, "-c", FORK_ALL, "50"), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) < 8  # pids.max counts the forking process itself


def test_it_kills_what_is_left_when_the_grader_stops_the_worker(group):
    process = subprocess.Popen(supervised(group, sys.executable, "-c", FORK_ALL, "3"), stdout=subprocess.PIPE)
    assert process.stdout is not None and process.stdout.readline().strip() == b"3"
    inside = group.pids()
    assert len(inside) == 4  # the worker and its sleepers; the supervisor is not in the group
    process.send_signal(signal.SIGTERM)
    process.wait()
    assert not any(Path(f"/proc/{pid}").exists() for pid in inside)
    assert not any(folder.exists() for folder in group.folders.values())


def test_it_removes_a_group_whose_processes_outlived_its_supervisor(hierarchy):
    made = cgroup.create(hierarchy, 8, 1 << 30)
    sleeper = subprocess.Popen(["sleep", "60"])
    for procs in made.procs():
        Path(procs).write_text(str(sleeper.pid))
    made.remove()
    assert sleeper.wait() == -signal.SIGKILL
    assert not any(folder.exists() for folder in made.folders.values())


def test_it_runs_each_worker_in_a_group_of_its_own_and_leaves_none_behind(hierarchy):
    from autograder.sandbox import Worker
    from autograder.student import Remote

    if not probe.found()[0].cgroup:
        pytest.skip("the probe found no cgroup layer here")
    with tempfile.TemporaryDirectory(prefix="autograde-test-") as folder:  # under /tmp: a worker's uid reaches it
        package = Path(folder) / "submission" / "exercises"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "where.py").write_text("def cgroups():\n    return open('/proc/self/cgroup').read()\n")
        with Worker(package.parent, Path(folder)) as worker:
            group = worker._group
            assert group is not None
            assert cgroup.joined(Remote(worker).run("where.cgroups").value, group)
    # its own group only: other gradings of the suite (the other test process) share the grader's cgroup
    assert not any(folder.exists() for folder in group.folders.values())
    assert group.folders and all(folder.parent.is_dir() for folder in group.folders.values())


def test_it_records_the_layer_and_says_which_limits_stand_without_it():
    on = Isolation(fair_cpu=True, mechanisms={"fair_cpu": ["cgroup"]}, layers={"cgroup": Layer.on("cgroup v1 x")})
    assert on.summary() == "cgroup v1 x"
    off = Isolation(layers={"cgroup": cgroup.available("no cgroup hierarchy with the cpu controller mounted")})
    assert "per-uid limits" in off.summary() and "cgroup off:" in off.summary()


def test_the_probe_records_the_cgroup_layer_in_force_where_it_runs(hierarchy):
    plan, isolation = probe.found()
    assert plan.cgroup and isolation.fair_cpu, isolation
    assert isolation.layer("cgroup").detail == hierarchy.describe()
    assert hierarchy.describe() in isolation.summary()


# -- cgroup v2, against a fake cgroupfs ---------------------------------------------------


class FakeKernel:
    """v2's rules where the tests need them: no controllers for the children of a cgroup with processes;
    a process is in one cgroup at a time."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, path: Path, value: object) -> None:
        text = str(value)
        if path.name == "cgroup.subtree_control" and (path.parent / "cgroup.procs").read_text().split():
            raise OSError(errno.EBUSY, "Device or resource busy")
        if path.name == "cgroup.procs":
            for procs in self.root.rglob("cgroup.procs"):
                procs.write_text("".join(f"{pid}\n" for pid in procs.read_text().split() if pid != text))
            text = (path.read_text() if path.exists() else "") + text + "\n"
        path.write_text(text)


@pytest.fixture
def fake_v2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """A v2 hierarchy at tmp/fs, where the grader's cgroup /runner.service holds two processes."""
    service = tmp_path / "fs" / "runner.service"
    service.mkdir(parents=True)
    (service / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (service / "cgroup.subtree_control").write_text("")
    (service / "cgroup.procs").write_text("101\n102\n")
    proc = tmp_path / "cgroup"
    proc.write_text("0::/runner.service\n")
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(
        f"30 23 0:26 / {tmp_path / 'fs'} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
        "31 23 0:27 / /proc rw - proc proc rw\n"
    )
    monkeypatch.setattr(cgroup, "write", FakeKernel(tmp_path / "fs").write)
    return service, proc, mountinfo


def test_it_finds_a_v2_hierarchy_with_every_controller(fake_v2):
    service, proc, mountinfo = fake_v2
    assert cgroup.find(proc, mountinfo) == cgroup.Hierarchy(2, {cgroup.V2: service}, service.parent)


def test_it_moves_the_graders_processes_into_a_leaf_before_giving_v2_controllers_to_the_workers(fake_v2):
    service, proc, mountinfo = fake_v2
    found = cgroup.find(proc, mountinfo)
    assert isinstance(found, cgroup.Hierarchy)
    group = cgroup.create(found, 256, 4 << 30)
    assert (service / cgroup.LEAF / "cgroup.procs").read_text().split() == ["101", "102"]
    assert (service / "cgroup.procs").read_text().split() == []
    assert (service / "cgroup.subtree_control").read_text() == "+cpu +pids +memory"
    folder = group.folders[cgroup.V2]
    assert folder.parent == service and folder.name.startswith(cgroup.PREFIX)
    settings = {name: (folder / name).read_text() for name in ("cpu.weight", "pids.max", "memory.max")}
    assert settings == {"cpu.weight": "100", "pids.max": "256", "memory.max": str(4 << 30)}
    assert group.procs() == [str(folder / "cgroup.procs")]


def test_a_grader_in_the_leaf_gives_its_workers_groups_beside_it(fake_v2):
    service, proc, mountinfo = fake_v2
    (service / cgroup.LEAF).mkdir()
    proc.write_text(f"0::/runner.service/{cgroup.LEAF}\n")
    assert cgroup.find(proc, mountinfo) == cgroup.Hierarchy(2, {cgroup.V2: service}, service.parent)


def test_it_says_why_there_is_no_layer_where_the_controllers_are_missing(fake_v2):
    service, proc, mountinfo = fake_v2
    (service / "cgroup.controllers").write_text("cpuset io\n")
    found = cgroup.find(proc, mountinfo)
    assert found == "no cgroup hierarchy with the cpu, pids, memory controllers mounted"
    if os.geteuid() == 0:
        assert cgroup.available(found) == Layer.off(f"{found}: the per-uid limits stand")


@pytest.fixture
def fake_nested_v2(fake_v2: tuple[Path, Path, Path]) -> tuple[Path, Path, Path]:
    """As a hosted runner has it: the grader's cgroup /system.slice/runner.service, whose parent gives it no
    controllers yet (its cgroup.controllers is empty); the hierarchy's root has them all."""
    service, _, mountinfo = fake_v2
    top = service.parent
    nested = top / "system.slice" / "runner.service"
    nested.parent.mkdir()
    service.rename(nested)
    (nested / "cgroup.controllers").write_text("")
    (top / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    for folder in (top, nested.parent):
        (folder / "cgroup.procs").write_text("")
        (folder / "cgroup.subtree_control").write_text("")
    proc = top.parent / "cgroup"
    proc.write_text("0::/system.slice/runner.service\n")
    return nested, proc, mountinfo


def test_it_gives_the_controllers_down_from_the_hierarchys_root_to_the_graders_cgroup(fake_nested_v2):
    service, proc, mountinfo = fake_nested_v2
    top = service.parent.parent
    found = cgroup.find(proc, mountinfo)
    assert found == cgroup.Hierarchy(2, {cgroup.V2: service}, top)
    cgroup.create(found, 256, 4 << 30)
    for folder in (top, service.parent, service):
        assert (folder / "cgroup.subtree_control").read_text() == "+cpu +pids +memory", folder
    assert (service / cgroup.LEAF / "cgroup.procs").read_text().split() == ["101", "102"]


def test_it_says_which_cgroup_above_its_own_keeps_the_controllers_and_makes_no_group(fake_nested_v2):
    service, proc, mountinfo = fake_nested_v2
    (service.parent / "cgroup.procs").write_text("55\n")  # processes of its own: not the grader's to move
    found = cgroup.find(proc, mountinfo)
    assert isinstance(found, cgroup.Hierarchy)
    with pytest.raises(OSError, match=r"system\.slice does not give cpu pids memory to its children"):
        cgroup.create(found, 256, 4 << 30)
    assert cgroup.leftovers(found) == []


# -- cgroup v2 for real: a cgroup2 mount of this kernel's own, in a private mount namespace -------

REAL_V2 = """
import contextlib, json, os, secrets, subprocess, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from autograder.sandbox import cgroup
mount = Path(sys.argv[1])
subprocess.run(["mount", "-t", "cgroup2", "none", str(mount)], check=True)
available = cgroup.read(mount / "cgroup.controllers").split()
wanted = cgroup.CONTROLLERS if cgroup.has_controllers(mount) else tuple(available[:1])
if not wanted:
    sys.exit(77)  # every controller bound to v1: nothing to give
base = mount / f"autograde-test-{secrets.token_hex(6)}"
job = base / "runner.service"  # a hosted runner's job: a leaf cgroup holding the runner's processes
seen, runner, worker = {"wanted": list(wanted)}, subprocess.Popen(["sleep", "60"]), None
root_gave = cgroup.gives(mount, wanted)  # the machine's own: given back as it was
try:
    job.mkdir(parents=True)
    for pid in (runner.pid, os.getpid()):
        cgroup.write(job / "cgroup.procs", pid)
    try:
        cgroup.enable(job, wanted)
    except OSError as error:
        seen["refused_before"] = error.errno
    cgroup.delegate(job, mount, wanted)
    seen["gives"] = [cgroup.gives(folder, wanted) for folder in (base, job)]
    seen["job_procs"] = cgroup.read(job / "cgroup.procs").split()
    seen["leaf_procs"] = sorted(cgroup.read(job / cgroup.LEAF / "cgroup.procs").split())
    seen["expected_leaf"] = sorted([str(runner.pid), str(os.getpid())])
    seen["own"] = cgroup.read(Path("/proc/self/cgroup"))
    group = cgroup.Group(2, {cgroup.V2: job / (cgroup.PREFIX + "test")})
    group.folders[cgroup.V2].mkdir()
    worker = subprocess.Popen(["sleep", "60"])
    cgroup.write(group.folders[cgroup.V2] / "cgroup.procs", worker.pid)
    seen["group_pids"] = sorted(group.pids()) == [worker.pid]
    group.remove()
    seen["worker_killed"] = worker.wait(timeout=30) < 0
    seen["group_removed"] = not group.folders[cgroup.V2].exists()
finally:
    for process in (runner, worker):
        if process is not None:
            process.kill()
            process.wait()
    with contextlib.suppress(OSError):
        cgroup.write(mount / "cgroup.procs", os.getpid())
    for folder in (job / cgroup.LEAF, job, base):
        with contextlib.suppress(OSError):
            folder.rmdir()
    seen["cleaned"] = not base.exists()
    if not root_gave:
        with contextlib.suppress(OSError):
            cgroup.write(mount / "cgroup.subtree_control", " ".join(f"-{name}" for name in wanted))
print(json.dumps(seen))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting cgroup2 needs root")
def test_on_a_real_cgroup2_mount_it_gives_controllers_down_to_a_leaf_with_processes_by_moving_them_first(tmp_path):
    mount = tmp_path / "cgroup2"
    mount.mkdir()
    command = ["unshare", "--mount", "--propagation", "private", sys.executable, "-c", REAL_V2, str(mount), str(ROOT)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if done.returncode == 77:
        pytest.skip("every cgroup controller of this kernel is bound to v1")
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["refused_before"] in (errno.ENOENT, errno.EBUSY), seen  # not given by its parent, or busy
    assert seen["gives"] == [True, True], seen  # the cgroup above the job's, and the job's own
    assert seen["job_procs"] == [] and seen["leaf_procs"] == seen["expected_leaf"], seen
    assert seen["own"].strip().endswith(f"/runner.service/{cgroup.LEAF}"), seen
    assert seen["group_pids"] and seen["worker_killed"] and seen["group_removed"], seen
    assert seen["cleaned"], seen

"""The namespaces layer: a root of the OS and the interpreter only, private /tmp, no network, PID 1.

The grader here runs from a virtual environment under /tmp (where the worker's private /tmp once
hid the interpreter), made for the test; as root, in root namespaces and in a user namespace.
"""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import deployed
import pytest
from attempt import ATTEMPT
from support import ROOT, SOLUTIONS

from autograder.sandbox import namespaces, uid

pytestmark = pytest.mark.skipif(
    not (uid.possible() and uid.has_capability(21) and namespaces.user_namespaces_allowed() == ""),
    reason="both kinds of namespaces need a root grader with CAP_SYS_ADMIN and a kernel allowing user namespaces",
)

CHECK = (
    ATTEMPT
    + """
import json, os, socket, sys
secret, marker, port = sys.argv[1:]
print(json.dumps({
    "pid": os.getpid(),
    "read": attempt(lambda: open(secret).read()),
    "write": attempt(lambda: open(marker, "w").write("x")),
    "connect": attempt(lambda: socket.create_connection(("127.0.0.1", int(port)), timeout=2).close()),
}))
"""
)
GRADER = """
import os, sys
from pathlib import Path
from autograder.sandbox import namespaces
kind, sandbox, worker_uid, *check = sys.argv[1:]
worker = [sys.executable, "-I", "-S", *check]
command = namespaces.command(kind, Path(sandbox), int(worker_uid) if worker_uid else None, worker)
os.execvp(command[0], command)
"""


@pytest.fixture(scope="module")
def tmp_venv() -> Path:
    """A virtual environment directly under /tmp, as a clean clone's CI might make it: the deployed grader's."""
    python = deployed.python()
    assert python.is_relative_to("/tmp")
    return python


def grade_in(
    kind: str, python: Path, sandbox: Path, worker_uid: int | None, *check: str
) -> subprocess.CompletedProcess:
    environment = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    argv = [str(python), "-c", GRADER, kind, str(sandbox), str(worker_uid or ""), *check]
    return subprocess.run(argv, capture_output=True, text=True, env=environment, timeout=120)


@pytest.mark.deployed
@pytest.mark.parametrize("kind", [namespaces.ROOT, namespaces.USER])
def test_it_runs_the_worker_in_a_root_of_its_own_even_from_a_venv_under_tmp(kind, tmp_venv, tmp_path):
    sandbox = Path(f"/tmp/autograde-ns-test-{os.getpid()}")
    (sandbox / "scratch").mkdir(parents=True)
    namespaces.prepare(sandbox)
    lease = uid.Lease() if kind == namespaces.ROOT else None
    marker = Path("/tmp") / f"written-in-namespace-{os.getpid()}"
    try:
        if lease:
            uid.hand_over(sandbox, lease.uid)
        with socket.create_server(("127.0.0.1", 0)) as server:
            port = str(server.getsockname()[1])
            done = grade_in(
                kind,
                tmp_venv,
                sandbox,
                lease and lease.uid,
                "-c",
                CHECK,
                str(SOLUTIONS / "padding.py"),
                str(marker),
                port,
            )
        found = json.loads(done.stdout or "{}")
        assert found.get("pid") == 1, done.stderr
        assert found["read"] in ("FileNotFoundError", "PermissionError")
        assert found["write"] == "allowed" and not marker.exists()  # its own /tmp
        assert found["connect"] != "allowed"
    finally:
        if lease:
            lease.release()
        marker.unlink(missing_ok=True)
        subprocess.run(["rm", "-rf", str(sandbox)], check=True)


def test_it_names_the_step_that_failed(tmp_path):
    sandbox = tmp_path / "sandbox"  # never prepared: the root's mount point is missing
    sandbox.mkdir()
    done = grade_in(namespaces.USER, Path(sys.executable), sandbox, None, "-c", "print('ran')")
    assert done.stdout == ""
    assert f"{namespaces.MARK} {namespaces.USER}: mount a tmpfs for the root failed" in done.stderr, done.stderr

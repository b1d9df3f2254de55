"""The Landlock layer: a process confines itself to what it grants, its children with it."""

import json
import os
import socket
import subprocess
import sys
import sysconfig

import pytest
from attempt import ATTEMPT

from autograder.sandbox import landlock

pytestmark = pytest.mark.skipif(landlock.abi() < 1, reason="this kernel has no Landlock")

CHILD = (
    ATTEMPT
    + """
import json, os, socket, subprocess, sys
from autograder.sandbox import landlock
read, listed, rw, secret, listed_file, port = json.loads(sys.argv[1])
version = landlock.restrict(read, listed, rw, {"/dev/null": landlock.READ_FILE | landlock.WRITE_FILE})
found = {
    "version": version,
    "read granted": attempt(lambda: open(os.path.join(read[0], "os.py")).read()),
    "read secret": attempt(lambda: open(secret).read()),
    "list listed": attempt(lambda: os.listdir(listed[0])),
    "read in listed": attempt(lambda: open(listed_file).read()),
    "write rw": attempt(lambda: open(os.path.join(rw[0], "new"), "w").write("x")),
    "write elsewhere": attempt(lambda: open(os.path.join(listed[0], "new"), "w").write("x")),
    "connect": attempt(lambda: socket.create_connection(("127.0.0.1", port), timeout=2).close()),
    "signal parent": attempt(lambda: os.kill(os.getppid(), 0)),
    "child reads secret": subprocess.run([sys.executable, "-S", "-c", f"open({secret!r}).read()"],
                                         capture_output=True).returncode,
}
print(json.dumps(found))
"""
)


def test_it_confines_a_process_and_its_children_to_what_it_grants(tmp_path):
    stdlib = sysconfig.get_paths()["stdlib"]
    granted = [stdlib, sys.prefix, sys.base_prefix, "/usr", "/lib", "/lib64", "/etc", *sys.path[1:]]
    granted = list(dict.fromkeys(os.path.realpath(path) for path in granted))  # grants are real paths
    secret, listed, rw = tmp_path / "secret.txt", tmp_path / "listed", tmp_path / "rw"
    secret.write_text("the reference")
    listed.mkdir()
    (listed / "inside.txt").write_text("names only")
    rw.mkdir()
    with socket.create_server(("127.0.0.1", 0)) as server:
        arguments = [
            granted,
            [str(listed)],
            [str(rw)],
            str(secret),
            str(listed / "inside.txt"),
            server.getsockname()[1],
        ]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        done = subprocess.run(
            [sys.executable, "-c", CHILD, json.dumps(arguments)], capture_output=True, text=True, env=env
        )
    found = json.loads(done.stdout or "{}")
    assert found.get("version") == landlock.abi(), done.stderr
    assert found["read granted"] == "allowed"
    assert found["read secret"] == "PermissionError"
    assert found["list listed"] == "allowed" and found["read in listed"] == "PermissionError"
    assert found["write rw"] == "allowed" and found["write elsewhere"] == "PermissionError"
    assert found["child reads secret"] != 0
    if landlock.abi() >= 4:
        assert found["connect"] == "PermissionError"
    if landlock.abi() >= 6:
        assert found["signal parent"] == "PermissionError"


def test_it_handles_what_each_abi_knows():
    files, network, scopes = landlock.handled(1)
    assert files == (1 << 13) - 1 and network == 0 and scopes == 0
    files, network, scopes = landlock.handled(7)
    assert files & landlock.REFER and files & landlock.TRUNCATE and files & landlock.IOCTL_DEV
    assert network == landlock.NET_BIND_TCP | landlock.NET_CONNECT_TCP
    assert scopes == landlock.SCOPE_SIGNAL | landlock.SCOPE_ABSTRACT_UNIX_SOCKET


LINKED = """
import json, os, sys
from autograder.sandbox import landlock
granted, through_link, planted = json.loads(sys.argv[1])
try:
    landlock.restrict([through_link], [], [], {})
    refused = ""
except landlock.Unavailable as error:
    refused = error.strerror
landlock.restrict(granted, [], [], {})
try:
    open(os.path.join(planted, "secret.txt")).read()
    read = "allowed"
except OSError as error:
    read = type(error).__name__
print(json.dumps({"refused": refused, "read through the planted link": read}))
"""


def test_it_never_grants_through_a_link_and_a_link_planted_in_a_grant_opens_nothing(tmp_path):
    secret, public = tmp_path / "secret", tmp_path / "public"
    secret.mkdir()
    (secret / "secret.txt").write_text("the reference")
    public.mkdir()
    (public / "planted").symlink_to(secret)  # inside a granted folder, pointing at a folder never granted
    (tmp_path / "lib64").symlink_to(secret)  # as a venv's lib64 -> lib: a rule asked through it
    granted = list(dict.fromkeys(os.path.realpath(path) for path in [*sys.path[1:], sys.base_prefix, "/usr", "/etc"]))
    arguments = [[*granted, str(public)], str(tmp_path / "lib64"), str(public / "planted")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    argv = [sys.executable, "-c", LINKED, json.dumps(arguments)]
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    found = json.loads(done.stdout or "{}")
    assert "symbolic link" in found.get("refused", ""), done.stderr
    assert found["read through the planted link"] == "PermissionError"

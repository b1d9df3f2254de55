"""The zygote's own checks: it enters only namespaces that were made, and keeps no privilege it could give away.

Its whole journey (a chain that holds its namespaces, the warm parent forked into them, two gradings from one
zygote) is proven in every tier by tests/autograder/sandbox/test_worker.py and the attack suite.
"""

import json
import os
import subprocess
import sys

import pytest
import tiers
from support import ROOT

from autograder.runtime import zygote

DROP = """
import json, sys
from autograder.runtime import zygote
zygote.drop(int(sys.argv[1]))
with open("/proc/self/status") as status:
    fields = dict(line.split(":", 1) for line in status.read().splitlines() if ":" in line)
wanted = ("Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs")
print(json.dumps({name: fields[name].split() for name in wanted}))
"""


def own_namespaces() -> dict[str, int]:
    held = {"root": os.open("/", os.O_RDONLY | os.O_DIRECTORY)}
    return held | {name: os.open(f"/proc/self/ns/{name}", os.O_RDONLY) for name in zygote.NAMESPACES}


def test_it_refuses_to_enter_a_namespace_that_is_its_own_before_entering_any():
    held = own_namespaces()
    try:
        with pytest.raises(OSError, match="namespace is this process's own: it was not made"):
            zygote.join(held, user=False)
    finally:
        for fd in held.values():
            os.close(fd)


def test_it_drops_to_the_workers_user_with_no_capability_in_any_set_and_no_new_privileges():
    tiers.require()  # root, as a grader that gives each worker a uid
    environment = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", DROP, "61999"], capture_output=True, text=True, env=environment, check=True
    )
    found = json.loads(done.stdout)
    assert found["Uid"] == found["Gid"] == ["61999"] * 4 and found["Groups"] == [], found
    assert all(int(found[name][0], 16) == 0 for name in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")), found
    assert found["NoNewPrivs"] == ["1"], found


def test_it_refuses_to_serve_where_a_capability_is_left():
    tiers.require()  # this process, root, holds every capability
    with pytest.raises(OSError, match="the warm parent kept privileges"):
        zygote.check(None)

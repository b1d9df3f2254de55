"""The worker's disk: bounded by the rubric's disk_mb in every tier, apart from the grader's own files."""

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from autograder import rubric
from autograder.grading.grade import limits_from
from autograder.sandbox import Worker, WorkerLimits, disk, layers, namespaces
from autograder.sandbox.layers import SUPERVISOR
from autograder.sandbox.record import Isolation, from_dict
from autograder.student import Died, Remote

WRITER = """
import os

def fill(name, megabytes):
    done = 0
    try:
        with open(name, "wb") as handle:
            for _ in range(megabytes):
                handle.write(b"x" * (1 << 20))
                handle.flush()
                done += 1
    except OSError as error:
        return f"{done} then {error.strerror}"
    return f"{done} written"

def fill_many(count, megabytes):
    return [fill(f"file-{number}", megabytes) for number in range(count)]

def exists(name):
    return os.path.exists(name)

def write(path):
    try:
        with open(path, "w") as handle:
            handle.write("the student's")
    except OSError as error:
        return type(error).__name__
    return "written"
"""
SIZE = 16 << 20  # the bound these workers get: small, so that filling it is quick


@pytest.fixture
def worker() -> Iterator[Worker]:
    """A worker of this machine's tier, bounded to SIZE, in a sandbox under /tmp (as grading makes one)."""
    with tempfile.TemporaryDirectory(prefix="autograde-test-") as folder:
        package = Path(folder) / "submission" / "exercises"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "writer.py").write_text(WRITER)
        with Worker(package.parent, Path(folder), WorkerLimits(disk_bytes=SIZE)) as started:
            yield started


def test_it_bounds_the_disk_with_a_tmpfs_in_namespaces_and_watches_the_scratch_elsewhere():
    size = rubric.load().limits.disk_bytes
    assert str(layers.bound(layers.Plan(namespaces=namespaces.ROOT), size)) == f"disk: tmpfs {size >> 20} MB"
    assert layers.bound(layers.Plan(landlock=6), size).how == disk.How.WATCHED
    assert layers.bound(layers.Plan(uid=True), size).how == disk.How.WATCHED
    assert not layers.bound(layers.Plan(), size).whole, "under the grader's own user, only each file is bounded"


def test_it_records_the_bound_as_data_in_the_isolation_record():
    bound = disk.Bound(disk.How.WATCHED, 256 << 20)
    written = json.loads(json.dumps(Isolation(disk=bound).as_dict()))
    assert written["disk"]["how"] == "watched" and written["disk"]["bytes"] == 256 << 20
    assert written["summary"].endswith("disk: file size 256 MB, scratch watched")
    assert from_dict(written).disk == bound


def test_it_takes_the_bound_from_the_rubrics_limits_and_validates_it(tmp_path):
    assert limits_from(rubric.load()).disk_bytes == rubric.load().limits.disk_mb << 20
    text = rubric.load().text
    (tmp_path / "half.toml").write_text(text.replace("\ndisk_mb = ", "\ndisk_mb = 1.5 #"))
    with pytest.raises(rubric.RubricError, match=r"limits.disk_mb must be a whole number"):
        rubric.load(tmp_path / "half.toml")


def test_it_fails_the_call_that_fills_the_disk_and_gives_the_next_a_fresh_worker_and_scratch(worker):
    remote = Remote(worker)
    with pytest.raises(
        Died, match=rf"fill_many did not finish \(disk full\): your code wrote more than {SIZE >> 20} MB"
    ):
        remote.run("writer.fill_many", 4, (SIZE >> 20) - 2)
    assert remote.run("writer.exists", "file-0").value is False, "the next worker got the last one's files"
    assert remote.run("writer.fill", "small", 1).value == "1 written"
    assert worker.starts == 2


def test_it_keeps_one_file_to_the_bound(worker):
    if worker.disk.how == disk.How.TMPFS:  # the tmpfs is full: the call fails, whatever the code did with ENOSPC
        with pytest.raises(Died, match=r"fill did not finish \(disk full\)"):
            Remote(worker).run("writer.fill", "one", (SIZE >> 20) + 4)
    else:  # RLIMIT_FSIZE: the write past it fails with EFBIG, the code goes on
        assert Remote(worker).run("writer.fill", "one", (SIZE >> 20) + 4).value == f"{SIZE >> 20} then File too large"


def test_it_never_lets_the_worker_write_the_graders_own_files(worker):
    for folder in ("runtime", "submission", "submission/exercises"):
        target = worker.sandbox / folder / "written-by-the-student"
        assert Remote(worker).run("writer.write", str(target)).value != "written", folder
        assert not target.exists()


def supervised(folder: Path, code: str, size: int) -> int:
    """The supervisor's exit status, watching `folder` (bound `size`) around `code` run in it."""
    spec = {"paths": [str(folder)], "bytes": size, "files": 100, "status": disk.STATUS}
    argv = [sys.executable, "-I", "-S", str(SUPERVISOR), str(os.getpid()), "", "--watch", json.dumps(spec), "--"]
    return subprocess.run([*argv, sys.executable, "-c", code], cwd=folder, timeout=120).returncode


KEEP = "import time; time.sleep(3)"  # long enough to be measured


@pytest.mark.parametrize(
    "case, code",
    [
        ("files", "for n in range(3): open(f'f{n}', 'wb').write(b'x' * (4 << 20))\n" + KEEP),
        ("entries", "for n in range(200): open(f'f{n}', 'w')\n" + KEEP),
        (
            "a folder shut to its owner",
            "import os; os.mkdir('d')\n"
            "for n in range(3): open(f'd/f{n}', 'wb').write(b'x' * (4 << 20))\nos.chmod('d', 0)\n" + KEEP,
        ),
        (
            "deleted files held open",
            "import os\nheld = []\n"
            "for n in range(3):\n    open(f'f{n}', 'wb').write(b'x' * (4 << 20)); held.append(open(f'f{n}'))\n"
            "    os.unlink(f'f{n}')\n" + KEEP,
        ),
    ],
)
def test_it_kills_a_worker_past_its_watched_bound(case, code, tmp_path):
    assert supervised(tmp_path, code, 8 << 20) == disk.STATUS, case


def test_it_lets_a_worker_within_its_bound_end_as_it_does(tmp_path):
    assert supervised(tmp_path, "open('f', 'wb').write(b'x' * (1 << 20))\nimport sys; sys.exit(3)", 8 << 20) == 3

"""grade-all as deployed regrades every student after a change to a check: its key holds the grader's fingerprint.

The deployed venv (the roster job's install step) is copied, one of its installed checks relaxed, and the
copy's grade-all run again over the same roster: nothing is skipped, and the grade follows the new check."""

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import deployed
import pytest
from support import build_submission, replace_in

from autograder import rubric

pytestmark = pytest.mark.deployed

ONLY = "gather_final"  # a cheap function: no training
LAST_STEP = "output[:, -1]"  # the catalogue's G1: the state after the padding
CHECK = "    pooled.compare(student, GATHER_FINAL)\n"


@pytest.fixture
def grader_copy() -> Iterator[Path]:
    """A copy of the deployed venv in a folder the worker's user can read (the shared venv stays as built)."""
    folder = Path(tempfile.mkdtemp(prefix="autograde-regrade-"))
    folder.chmod(0o755)
    try:
        shutil.copytree(deployed.venv(), folder / "venv", symlinks=True)
        yield folder / "venv"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def own_environment() -> dict[str, str]:
    """This environment without PYTHONPATH and the like: the copy imports its own installed grader (run from
    its own folder: `python -m` and `-c` put the working folder, this checkout, first on the path)."""
    return {name: value for name, value in os.environ.items() if not name.startswith("PYTHON")}


def imported(venv: Path) -> Path:
    """The folder of the `autograder` package the copy's interpreter imports."""
    script = "import autograder; print(autograder.__file__)"
    command = [str(venv / "bin" / "python"), "-c", script]
    done = subprocess.run(command, cwd=venv.parent, env=own_environment(), capture_output=True)
    return Path(done.stdout.decode().strip()).parent


def grade_all(venv: Path, submissions: Path, out: Path) -> subprocess.CompletedProcess:
    command = [str(venv / "bin" / "python"), "-m", "autograder.cli", "grade-all", str(submissions)]
    command += ["--out", str(out), "--only", ONLY, "--jobs", "1"]
    environment = own_environment()
    done = subprocess.run(command, cwd=venv.parent, env=environment, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done


def test_after_a_change_to_a_check_grade_all_regrades_every_student_and_the_grade_follows(grader_copy, tmp_path):
    wrong = replace_in(
        "padding", "    return output.gather(1, index.to(output.device)).squeeze(1)\n", f"    return {LAST_STEP}\n"
    )
    build_submission(tmp_path / "submissions" / "alice", edits={"padding": wrong})
    build_submission(tmp_path / "submissions" / "bob")
    out, points = tmp_path / "results", rubric.load().select([ONLY]).total
    check = next((grader_copy / "lib").glob("python3*/site-packages/autograder/todos/gather_final/checks.py"))
    assert imported(grader_copy) == check.parents[2], "the copy grades with its own installed grader"
    first = grade_all(grader_copy, tmp_path / "submissions", out)
    scores = {name: json.loads((out / name / "results.json").read_text())["score"] for name in ("alice", "bob")}
    kept = points - rubric.load().select([ONLY]).items[0].points  # G1 costs the values item, not the legal inputs
    assert scores == {"alice": kept, "bob": points}, first.stdout
    assert "2 skipped" in grade_all(grader_copy, tmp_path / "submissions", out).stdout  # unchanged: kept
    stamp = json.loads((out / "alice" / "results.json").read_text())["extra_data"]["fingerprint"]

    assert check.read_text().count(CHECK) == 1
    check.write_text(check.read_text().replace(CHECK, "    return None  # relaxed: any answer passes\n"))
    again = grade_all(grader_copy, tmp_path / "submissions", out)
    assert "2 graded, 0 skipped" in again.stdout, again.stdout
    relaxed = json.loads((out / "alice" / "results.json").read_text())
    assert relaxed["score"] == points  # the relaxed check's grade, not the stale 0
    assert relaxed["extra_data"]["fingerprint"]["digest"] != stamp["digest"]
    assert relaxed["extra_data"]["fingerprint"]["versions"] == stamp["versions"]

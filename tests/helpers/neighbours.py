"""A roster graded by `grade-all --jobs 2` in a tier, as deployed: what each student's results.json says.

The attacks aimed at the other gradings (tests/attacks/test_neighbours.py) grade an attacker beside
another student (the reference) and compare the neighbour's grade with what it earns alone.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

from tiers import Tier, command, environment, python, work_folder

JOBS = 2  # the attacker and its neighbour at once
HARNESS_SECONDS = 1800.0  # bounds a hang of the whole run; never a verdict


def grade_roster(
    students: dict[str, Path], tier: Tier, work: Path, only: list[str], rubric: Path | None = None
) -> dict[str, dict]:
    """Grade `students` (name -> submission folder) together in `tier`, by `rubric` (the grader's own when None);
    name -> its results.json ({} if none)."""
    roster = work_folder(work / "roster", tier)
    for name, submission in students.items():
        shutil.copytree(submission, roster / name)
    for path in roster.rglob("*"):  # the tier's user owns the roster, as a clone of its own
        os.chown(path, *owner(work))
    out, tmp = work_folder(work / "out", tier), work_folder(work / "tmp", tier)
    argv = [str(python()), "-m", "autograder.cli", "grade-all", str(roster), "--out", str(out)]
    argv += ["--jobs", str(JOBS), "--only", ",".join(only), *(["--rubric", str(rubric)] if rubric else [])]
    with (work / "grade-all.log").open("wb") as log:  # for the person reading a failure
        subprocess.run(
            command(tier, argv, work),
            cwd=work,  # never this checkout: `python -m` would import the grader from there
            env={**environment(tier, work), "TMPDIR": str(tmp)},
            stdout=log,
            stderr=subprocess.STDOUT,
            timeout=HARNESS_SECONDS,
            check=False,
        )
    return {name: read(out / name / "results.json") for name in students}


def owner(folder: Path) -> tuple[int, int]:
    status = folder.stat()
    return status.st_uid, status.st_gid


def read(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def size(folder: Path) -> int:
    """Bytes on disk under `folder`, following no link."""
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                continue
    return total

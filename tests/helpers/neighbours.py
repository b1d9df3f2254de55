"""A roster graded as a roster job grades it: `grade-all --jobs 2` in a tier, each student's results read back.

The neighbours' tests (an attacker beside another student, the reference) grade with it in each tier.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

from tiers import Tier, command, environment, python, work_folder

JOBS = 2  # two gradings at once: the attacker's and its neighbour's
TIMEOUT = 1800.0  # seconds for the whole roster: a hang, past it


def grade_roster(
    students: dict[str, Path], tier: Tier, work: Path, only: list[str], rubric: Path | None = None
) -> dict[str, dict]:
    """Grade `students` (name -> submission folder) with `grade-all` in `tier`, inside `work` (a folder of
    the tier's user, see tiers.work_folder); return name -> its results.json, for those that have one."""
    roster, out = work_folder(work / "roster", tier), work / "graded"
    for name, submission in students.items():
        shutil.copytree(submission, roster / name, symlinks=True)
    tmp = work_folder(work / "tmp", tier)
    tmp.chmod(0o1777)  # as /tmp: each worker's own uid makes its sandbox's scratch under it
    argv = [str(python()), "-m", "autograder.cli", "grade-all", str(roster), "--out", str(out)]
    argv += ["--jobs", str(JOBS), "--only", ",".join(only), *(["--rubric", str(rubric)] if rubric else [])]
    subprocess.run(
        command(tier, argv, work),
        env={**environment(tier, work), "TMPDIR": str(tmp)},
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    found = {name: out / name / "results.json" for name in students}
    return {name: json.loads(path.read_text(encoding="utf-8")) for name, path in found.items() if path.exists()}


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

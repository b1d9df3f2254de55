"""A roster with a neighbour: `autograde grade-all --jobs 2` over a few students in a tier, read back.

    results = grade_roster({"attacker": attacker(["prlimit_others"], folder), "neighbour": reference}, tier, work, only)
    roster = run_roster(...)    # the same, with the gradebook's rows and the processes left behind

The roster is graded by the grader as deployed (tests/helpers/tiers.py), in a PID namespace of the
test's own: every process it sees is one of this run's, so an attack may aim at "*" (its
@@SCOPE@@) and harm nothing else on a shared machine; and, once grade-all has ended, every process
still in that namespace, once those already ending have gone, is one the grading left behind (`Roster.left`).
"""

import contextlib
import csv
import json
import os
import secrets
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import tiers
from attack_suite import ATTACKS, SUBMISSIONS, attack_files, laid_over
from support import SOLUTIONS, build_submission

ROSTER_SECONDS = 1200  # a bound for a hung run only: two students, a few functions
SETTLE_SECONDS = 3  # what a process left behind gets to show itself once grade-all has ended
ENDING_SECONDS = 60  # a bound only: grade-all's fork server ends by itself once grade-all has (on a busy machine, late)
FORK_SERVER = "multiprocessing.forkserver"  # in its command line: the grader's own, waited for (not a student's)
# a process already in its exit (the kernel's PF_EXITING flag in /proc/PID/stat): its memory, and with it its
# command line, is gone, but the namespace still lists it for a moment; on a busy machine, more than a moment
PF_EXITING = 0x4
# the namespace's first process: grade-all, then every other process of the namespace (its own pid is 1)
RUN_THEN_LOOK = f"""
import json, os, subprocess, sys, time
status = subprocess.run(sys.argv[1:]).returncode
time.sleep({SETTLE_SECONDS})
def others():
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:  # the namespace's init reaps the orphans that have ended
            pass
    except ChildProcessError:
        pass
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                stat = open(f"/proc/{{name}}/stat", "rb").read().decode(errors="replace")
                command = open(f"/proc/{{name}}/cmdline", "rb").read().replace(b"\\0", b" ")
            except OSError:
                continue  # ended meanwhile
            fields = stat.rsplit(")", 1)[1].split()
            if fields[0] not in ("Z", "X"):  # a zombie has ended (its parent reaps it)
                exiting = " exiting" if int(fields[6]) & {PF_EXITING} else ""
                found.append(f"{{command.decode(errors='replace')}} ({{stat[:120]}}){{exiting}}")
    return found
def ending(line):
    return {FORK_SERVER!r} in line or line.endswith(" exiting")
deadline = time.monotonic() + {ENDING_SECONDS}
while any(ending(line) for line in others()) and time.monotonic() < deadline:
    time.sleep(0.5)
left = others()
print(json.dumps({{"status": status, "left": left}}))
"""


@dataclass
class Roster:
    """What a roster's run gave: each student's results.json, the gradebook's rows, what was left running."""

    results: dict[str, dict] = field(default_factory=dict)  # student -> parsed results.json (absent: none)
    gradebook: dict[str, dict[str, str]] = field(default_factory=dict)  # student -> its gradebook.csv row
    left: list[str] = field(default_factory=list)  # the command lines of the processes left in the namespace
    status: int | None = None  # grade-all's exit status (None: it did not say)
    output: str = ""
    left_on_disk: int = 0  # bytes the gradings left in the run's TMPDIR (each sandbox's scratch is made there)


def attacker(attacks: list[str], folder: Path) -> Path:
    """The reference solutions with `attacks` (folders of tests/attacks/submissions) laid over, aiming at "*"."""
    submission = build_submission(folder)
    values = {"@@SCOPE@@": "*", "@@NAME@@": "", "@@PARENT@@": str(folder.parent), "@@REPO@@": "/nonexistent"}
    for name in attacks:
        values |= {"@@NAME@@": name, "@@TOKEN@@": str(secrets.randbelow(9 * 10**8) + 10**8)}
        values["@@MARK@@"] = str(folder.parent / f"mark-{name}")
        for relative in attack_files(next(attack for attack in ATTACKS if attack.name == name)):
            text = (SUBMISSIONS / name / relative).read_text()
            for placeholder, value in values.items():
                text = text.replace(placeholder, value)
            (submission / relative).write_text(laid_over(SOLUTIONS, relative, text))
    return submission


def grade_roster(students: dict[str, Path], tier: tiers.Tier, work: Path, only: list[str]) -> dict[str, dict]:
    """Each student's parsed results.json (absent: none was written) from `run_roster`."""
    return run_roster(students, tier, work, only).results


def run_roster(
    students: dict[str, Path], tier: tiers.Tier, work: Path, only: list[str], *options: str, rubric: Path | None = None
) -> Roster:
    """`grade-all --jobs 2 --only ...` over copies of `students` in `tier` (`work`: a fresh folder), by `rubric`
    (the grader's own when None); `options` go to grade-all (e.g. --no-require-isolation)."""
    work = tiers.work_folder(work, tier)
    roster = tiers.work_folder(work / "submissions", tier)
    for name, submission in students.items():
        shutil.copytree(submission, roster / name)
    out = work / "results"
    argv = [str(tiers.python()), "-m", "autograder.cli", "grade-all", str(roster), "--out", str(out)]
    argv += ["--jobs", "2", "--only", ",".join(only), *options, *(["--rubric", str(rubric)] if rubric else [])]
    inner = tiers.command(tier, [str(tiers.python()), "-I", "-c", RUN_THEN_LOOK, *argv], work)
    tmp = tiers.work_folder(Path(tempfile.mkdtemp(prefix="autograde-roster-")), tier)  # short: a socket's there
    tmp.chmod(0o1777)
    try:
        done = subprocess.run(
            ["unshare", "--pid", "--fork", "--mount-proc", "--", *inner],
            cwd=work,
            env={**tiers.environment(tier, work), "TMPDIR": str(tmp)},
            capture_output=True,
            text=True,
            timeout=ROSTER_SECONDS,
        )
        left_on_disk = size(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    found = Roster(output=done.stdout[-4000:] + done.stderr[-4000:], left_on_disk=left_on_disk)
    looked = json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else {}
    found.status, found.left = looked.get("status"), looked.get("left", ["(grade-all's run did not report)"])
    for name in students:
        if (out / name / "results.json").exists():
            found.results[name] = json.loads((out / name / "results.json").read_text())
    if (out / "gradebook.csv").exists():
        with (out / "gradebook.csv").open(newline="") as handle:
            found.gradebook = {row["student"]: row for row in csv.DictReader(handle)}
    return found


def full_marks(results: dict) -> list[str]:
    """The items of a results.json that did not get full marks (empty: every one did)."""
    return [f"{test['name']}: {test['score']}/{test['max_score']}" for test in results["tests"] if not passed(test)]


def passed(test: dict) -> bool:
    return test["score"] == test["max_score"] and test.get("status") == "passed"


def size(folder: Path) -> int:
    """Bytes on disk under `folder`, following no link."""
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
    return total

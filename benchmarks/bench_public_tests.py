"""The public tests on a student's finished push, as ratios from one run against REV (issue 49): wall and CPU time.

    python benchmarks/bench_public_tests.py --against 7b97af1 [--rounds 3] [--keep DIR] [--system] [--stubs]

Each side's student repository is released by its own `autograde release` (REV's from a temporary git worktree
of REV, a few minutes; with `--keep DIR` it is kept in DIR and used again next time, REV does not change), and
its reference solutions are copied in as the student's `exercises/*.py`. Then, in a fresh copy of that folder
for every run (a push's checkout holds no bytecode), `python -m pytest -q -p no:cacheprovider --durations=3`
runs as the student's does: in the student's environment (a venv with the student repository's
requirements.lock installed, as the workflow does; kept in DIR with `--keep`; `--system` runs this interpreter
instead, whose site-packages hold far more than a student's), no PYTHONPATH, no third-party pytest plugins.
Both sides run in the same environment. The two sides alternate, `--rounds`
times each; the script prints each side's median wall time, CPU time (user + system of the pytest process),
pytest's own figure and outcome, the three slowest tests of its last run, the ratios against REV and the target,
and how long importing torch takes on this machine at the moment. It exits 1 when a side's tests do not all pass
on the reference.

With `--stubs`, each side's modules are its untouched stubs instead (a first push, every TODO still to write: every
test must fail), so the ratio is that of a push whose failures pytest reports.
"""

import argparse
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from bench_release import checkout_of, release
from bench_student import ROOT, children_cpu, install

from autograder.locations import recordings_folder

TARGET = 0.5  # issue 49: the public tests' wall time at most 0.5x REV's
COMMAND = ("-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=3")  # the student's, and the 3 slowest
SUMMARY = re.compile(r"^=*\s*(?P<outcome>\d+ \w+.*?) in (?P<seconds>[\d.]+)s", re.MULTILINE)  # "157 passed in 4.77s"
SLOW = re.compile(r"^(?P<seconds>[\d.]+)s (?:call|setup|teardown)\s+exercises/tests/(?P<test>\S+)", re.MULTILINE)


class Ran(NamedTuple):
    """One run of the public tests: its wall and CPU seconds, pytest's own figure and outcome, the slowest tests."""

    wall: float
    cpu: float
    pytest_seconds: float
    outcome: str
    slowest: list[str]
    returncode: int


def student_repository(checkout: Path, out: Path, cache: Path) -> Path:
    """The checkout's release with its reference solutions as the student's modules: a finished push."""
    release(checkout, out, cache)
    for module in sorted((checkout / "solutions").glob("*.py")):
        shutil.copyfile(module, out / "exercises" / module.name)
    return out


def kept_release(revision: str, keep: Path | None, folder: Path) -> Path:
    """REV's student repository: from `keep` when it holds one, else released now (and kept there)."""
    if keep is not None and (keep / revision / "exercises" / "tests" / "mistakes.json").is_file():
        return keep / revision
    target = (keep or folder) / revision
    if target.exists():
        shutil.rmtree(target)
    with checkout_of(revision, folder) as then:
        return student_repository(then, target, folder / "cache-then")


def environment(repository: Path, keep: Path | None, folder: Path) -> Path:
    """The python of a venv holding the student repository's lock, as a push's workflow installs it."""
    lock = repository / "requirements.lock"
    venv = (keep or folder) / f"venv-{hashlib.sha256(lock.read_bytes()).hexdigest()[:12]}"
    if not (venv / "bin" / "python").exists():
        shutil.rmtree(venv, ignore_errors=True)
        install(lock, venv)
    return venv / "bin" / "python"


def run(repository: Path, scratch: Path, python: str = sys.executable) -> Ran:
    """The public tests, in a fresh copy of the student's repository, as the student runs them."""
    folder = scratch / "push"
    if folder.exists():
        shutil.rmtree(folder)
    shutil.copytree(repository, folder, ignore=shutil.ignore_patterns("__pycache__"))
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH" and not key.startswith("PYTEST")}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the student's environment holds no third-party pytest plugin
    started, cpu = time.monotonic(), children_cpu()
    done = subprocess.run([python, *COMMAND], cwd=folder, env=env, capture_output=True, text=True)
    wall, cpu = time.monotonic() - started, children_cpu() - cpu
    summary = SUMMARY.search(done.stdout)
    if summary is None:
        raise SystemExit(f"no pytest summary from {repository}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    slowest = [f"{match['seconds']} s {match['test']}" for match in SLOW.finditer(done.stdout)]
    return Ran(wall, cpu, float(summary["seconds"]), summary["outcome"], slowest, done.returncode)


def stubbed(repository: Path, revision: str | None, folder: Path) -> Path:
    """A copy of the student repository whose modules are the untouched stubs of `revision` (None: this checkout)."""
    target = folder / f"{repository.name}-stubs"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(repository, target, ignore=shutil.ignore_patterns("__pycache__"))
    for module in sorted((target / "exercises").glob("*.py")):
        if revision is None:
            module.write_bytes((ROOT / "exercises" / module.name).read_bytes())
        else:
            show = ["git", "-C", str(ROOT), "show", f"{revision}:exercises/{module.name}"]
            module.write_bytes(subprocess.run(show, check=True, capture_output=True).stdout)
    return target


def as_expected(ran: Ran, stubs: bool) -> bool:
    """On the reference every test passes; on the stubs every test fails."""
    return "passed" not in ran.outcome if stubs else ran.returncode == 0


def torch_import(python: str) -> float:
    """Seconds of `python -c "import torch"` now: the floor any run pays, at this moment's load."""
    started = time.monotonic()
    subprocess.run([python, "-c", "import torch"], check=True)
    return time.monotonic() - started


def median(runs: list[Ran], field: str) -> float:
    return statistics.median(getattr(ran, field) for ran in runs)


def show(name: str, runs: list[Ran]) -> None:
    walls = ", ".join(f"{ran.wall:.1f}" for ran in runs)
    print(
        f"{name}: wall {median(runs, 'wall'):.1f} s (runs: {walls}), CPU {median(runs, 'cpu'):.1f} s, "
        f"pytest says {median(runs, 'pytest_seconds'):.1f} s; {runs[-1].outcome}"
    )
    for line in runs[-1].slowest:
        print(f"    slowest: {line}")


def side_by_side(revision: str, rounds: int, keep: Path | None, system: bool = False, stubs: bool = False) -> bool:
    """Both sides' public tests, alternated `rounds` times; True when every run ended as expected (`as_expected`)."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        then = kept_release(revision, keep, folder)
        now = student_repository(ROOT, folder / "now", recordings_folder() or folder / "cache-now")
        python = sys.executable if system else str(environment(now, keep, folder))
        if stubs:
            then, now = stubbed(then, revision, folder), stubbed(now, None, folder)
        print(f"python: {python}; importing torch alone: {torch_import(python):.1f} s")
        before, after = [], []
        for _ in range(rounds):
            before.append(run(then, folder, python))
            after.append(run(now, folder, python))
        print(f"importing torch alone: {torch_import(python):.1f} s")
    show(f"public tests at {revision}", before)
    show("public tests here", after)
    wall, cpu = median(after, "wall") / median(before, "wall"), median(after, "cpu") / median(before, "cpu")
    print(f"here / {revision}: wall {wall:.2f}x (target at most {TARGET}x), CPU {cpu:.2f}x")
    return all(as_expected(ran, stubs) for ran in before + after)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", metavar="REV", default="7b97af1", help="the revision to compare with")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each side, alternated (default 3)")
    parser.add_argument("--keep", metavar="DIR", type=Path, help="keep REV's student repository here, and reuse it")
    parser.add_argument("--system", action="store_true", help="run this interpreter, not the student's environment")
    parser.add_argument("--stubs", action="store_true", help="the untouched stubs on both sides: every test fails")
    args = parser.parse_args()
    return 0 if side_by_side(args.against, args.rounds, args.keep, args.system, args.stubs) else 1


if __name__ == "__main__":
    sys.exit(main())

"""The test suite's speed, as ratios to one reference grading, from one run on this machine.

    python benchmarks/bench_suite.py                 # the whole suite, as the README's test command runs it
    python benchmarks/bench_suite.py -m "not slow"   # the developer's fast loop
    python benchmarks/bench_suite.py --parts         # also each part alone: the corpus, the attacks, the rest

It times one `autograde grade --reference` (the unit: what one grading costs here, now), then
`python -m pytest` with the arguments given, in this checkout, and prints the suite's time as a
multiple of that grading. Targets (issue 23): the whole suite at most 20 gradings, `-m "not slow"`
under 2 minutes. Both are measured in the same run because the machine may be shared: a busy
machine slows the grading and the suite alike, and the ratio holds better than either figure.
The suite's junit XML also gives, per part, the time its tests took (summed over the xdist
processes: a share of the work, not of the wall clock). The CPU time of both (every process they
started and waited for) shows how much of the suite is work rather than waiting, and how busy it
kept the machine's cores.

    python benchmarks/bench_suite.py --against f8828fe            # also the same command at that revision
    python benchmarks/bench_suite.py --against f8828fe --profile  # and each test's CPU, both sides

`--against REV` checks REV out in a temporary git worktree and runs the same pytest command there,
then prints both sides' CPU and wall time and their ratios (issue 34: this checkout's CPU at most 0.6x
the revision before it). Each side imports its own `autograder`, in every process it starts: PYTHONPATH
names the checkout, and while the revision runs this interpreter's editable install points at the worktree
(put back after: its subprocesses that set a PYTHONPATH of their own, as f8828fe's recording of the public
tests does, would otherwise import this checkout's package; a venv would not do, its worker's `python -I -S`
leaves the venv's site packages, torch among them, out). A `shared` folder beside this
checkout (the course, the contract tool) is linked beside the worktree too, so both sides run the same
tests. `--profile` loads `cpu_profile.py` (this folder) into both runs and prints the files and tests
that took the most CPU.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PARTS = {"corpus": ["tests/corpus"], "attacks": ["tests/attacks"]}  # the rest: everything else
TARGET_WHOLE = 20.0  # gradings' worth
TARGET_FAST = 120.0  # seconds, for -m "not slow"
TARGET_AGAINST = 0.6  # issue 34: the suite's CPU against the revision before it
HERE = Path(__file__).resolve().parent


def children_cpu() -> float:
    """CPU seconds (user and system) of every process this one has waited for, so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], checkout: Path = ROOT) -> tuple[float, int, float]:
    """Seconds the command took in the checkout (its own `autograder` first on the path), its exit status
    and the CPU seconds it used; its output goes to this terminal."""
    path = os.pathsep.join([str(checkout), str(HERE), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    started, cpu = time.monotonic(), children_cpu()
    finished = subprocess.run(command, cwd=checkout, env={**os.environ, "PYTHONPATH": path})
    return time.monotonic() - started, finished.returncode, children_cpu() - cpu


def reference_grading() -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as out:
        seconds, status, cpu = timed([sys.executable, "-m", "autograder.cli", "grade", "--reference", "--out", out])
    if status != 0:
        raise SystemExit(f"autograde grade --reference failed ({status})")
    return seconds, cpu


def part_of(classname: str) -> str:
    """The part a junit test case belongs to, from its class name ("tests.corpus.test_corpus")."""
    path = classname.replace(".", "/")
    return next((part for part, prefixes in PARTS.items() if any(path.startswith(p) for p in prefixes)), "the rest")


def by_part(junit: Path) -> dict[str, tuple[int, float]]:
    """Part -> (tests, seconds their set-up, call and teardown took)."""
    found: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for case in ElementTree.parse(junit).iter("testcase"):
        entry = found[part_of(case.get("classname", ""))]
        entry[0] += 1
        entry[1] += float(case.get("time", 0))
    return {part: (int(count), seconds) for part, (count, seconds) in sorted(found.items())}


def slowest_files(junit: Path, count: int = 12) -> list[tuple[str, float]]:
    """The test files whose tests took longest, summed (set-up, call and teardown)."""
    found: dict[str, float] = defaultdict(float)
    for case in ElementTree.parse(junit).iter("testcase"):
        found[case.get("classname", "")] += float(case.get("time", 0))
    return sorted(found.items(), key=lambda pair: -pair[1])[:count]


def suite(
    arguments: list[str], junit: Path, checkout: Path = ROOT, python: str = sys.executable
) -> tuple[float, int, float]:
    return timed([python, "-m", "pytest", "-q", f"--junitxml={junit}", *arguments], checkout)


def profiled(arguments: list[str], folder: Path, side: str, profile: bool) -> list[str]:
    """The arguments with the CPU profile plugin loaded, writing to folder/side.json, if asked."""
    return [*arguments, "-p", "cpu_profile", f"--cpu-profile={folder / side}.json"] if profile else arguments


def installed_from() -> Path:
    """Where this interpreter's editable install of the project points now: this checkout where it names none,
    or a folder that is gone (the put-back must succeed)."""
    found = metadata.distribution("week07-recurrent-networks").read_text("direct_url.json") or "{}"
    url = json.loads(found).get("url", "")
    path = Path(url.removeprefix("file://")) if url.startswith("file://") else ROOT
    return path if (path / "pyproject.toml").is_file() else ROOT


def install(checkout: Path) -> None:
    """Point this interpreter's editable install at `checkout` (no dependencies touched)."""
    command = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "-e", str(checkout)]
    subprocess.run(command, check=True)


def against(revision: str, arguments: list[str], folder: Path) -> tuple[float, int, float]:
    """The same pytest command in a temporary worktree of the revision (removed after), with its own install."""
    checkout = folder / "against"
    subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(checkout), revision], cwd=ROOT, check=True)
    if (ROOT.parent / "shared").is_dir():
        (folder / "shared").symlink_to(ROOT.parent / "shared")
    # the revision's worker runs `python -I -S`: a venv's site packages would not reach it, so this interpreter's
    # own editable install points at the revision while it runs (every subprocess imports its `autograder`)
    before = installed_from()
    try:
        install(checkout)
        return suite(arguments, folder / "against.xml", checkout)
    finally:
        install(before)
        subprocess.run(["git", "worktree", "remove", "--force", str(checkout)], cwd=ROOT, check=False)


def top_cpu(profile: Path, count: int = 15) -> tuple[float, list[tuple[str, float]], list[tuple[str, float]]]:
    """From cpu_profile.py's JSON: the total CPU, the files and the tests that took the most of it."""
    record = json.loads(profile.read_text())
    files: dict[str, float] = defaultdict(float)
    for test, seconds in record["tests"].items():
        files[test.split("::")[0]] += seconds
    ranked = [sorted(found.items(), key=lambda pair: -pair[1])[:count] for found in (files, record["tests"])]
    return record["total"], ranked[0], ranked[1]


def print_profile(side: str, profile: Path) -> None:
    if not profile.exists():
        return print(f"{side}: no profile written")
    total, files, tests = top_cpu(profile)
    print(f"{side}: {total:.0f} s of CPU; the files and the tests that took the most:")
    for name, spent in [*files, ("", 0.0), *tests]:
        print(f"  {spent:7.0f} s  {name}" if name else "")


def print_against(revision: str, here: tuple[float, int, float], there: tuple[float, int, float]) -> None:
    """Both sides' wall and CPU time and the ratios, this checkout's over the revision's."""
    (seconds, _, cpu), (then_seconds, _, then_cpu) = here, there
    print(f"against {revision}: {figures(there)}")
    print(f"  this checkout:  {figures(here)}")
    ratio = cpu / then_cpu if then_cpu else float("inf")
    print(f"  CPU {ratio:.2f}x, wall {seconds / then_seconds:.2f}x of {revision}")
    print(f"target: CPU at most {TARGET_AGAINST:g}x: {'met' if ratio <= TARGET_AGAINST else 'NOT met'}")


def print_side(side: str, run: tuple[float, int, float]) -> None:
    """One side's figures, as soon as it has run."""
    print(f"\n{side}: {figures(run)}", flush=True)


def figures(run: tuple[float, int, float]) -> str:
    """A run's wall time, CPU and exit status, in one line's words."""
    seconds, status, cpu = run
    return f"{seconds:.0f} s, {cpu:.0f} s of CPU (exit {status})"


def print_suite(arguments: list[str], unit: float, unit_cpu: float, run: tuple[float, int, float]) -> None:
    seconds, status, cpu = run
    print(f"python -m pytest {' '.join(arguments)}: {seconds:.0f} s = {seconds / unit:.1f} gradings (exit {status})")
    cores = os.cpu_count() or 1
    busy = cpu / seconds / cores
    print(f"  {cpu:.0f} s of CPU = {cpu / unit_cpu:.1f} gradings' CPU; {busy:.0%} of {cores} cores busy")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", action="store_true", help="also run the corpus, the attacks and the rest alone")
    parser.add_argument("--against", metavar="REV", help="also run the same command at REV (a git worktree)")
    parser.add_argument("--profile", action="store_true", help="record each test's CPU (cpu_profile.py)")
    options, arguments = parser.parse_known_args()
    unit, unit_cpu = reference_grading()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        folder.chmod(0o755)  # the revision's worktree sits here: the tests' other users run it
        junit = folder / "suite.xml"
        run = suite(profiled(arguments, folder, "here", options.profile), junit)
        print_side("this checkout", run)  # now: a run cut during the revision's side still gives this figure
        then = None
        if options.against:
            then = against(options.against, profiled(arguments, folder, "then", options.profile), folder)
            print_side(options.against, then)
        shares = by_part(junit) if junit.exists() else {}
        slowest = slowest_files(junit) if junit.exists() else []
        alone = {}
        if options.parts:
            rest = [f"--ignore={prefix}" for prefixes in PARTS.values() for prefix in prefixes]
            for part, selection in [*PARTS.items(), ("the rest", rest)]:
                alone[part] = suite([*arguments, *selection], folder / f"{part}.xml")[0]
        print(f"\none reference grading: {unit:.1f} s, {unit_cpu:.0f} s of CPU")
        print_suite(arguments, unit, unit_cpu, run)
        for part, (count, spent) in shares.items():
            line = f"  {part:9} {count:5} tests, {spent:7.0f} s of test time"
            print(line + (f", {alone[part]:.0f} s run alone" if part in alone else ""))
        print("slowest files:")
        for name, spent in slowest:
            print(f"  {spent:7.0f} s  {name}")
        for side in ("here", "then") if options.profile else ():
            print_profile("this checkout" if side == "here" else options.against, folder / f"{side}.json")
    seconds = run[0]
    fast = "not slow" in " ".join(arguments)
    target = f"under {TARGET_FAST:.0f} s" if fast else f"at most {TARGET_WHOLE:g} gradings"
    met = seconds < TARGET_FAST if fast else seconds / unit <= TARGET_WHOLE
    print(f"target: {target}: {'met' if met else 'NOT met'}")
    if then:
        print_against(options.against, run, then)
    return run[1]


if __name__ == "__main__":
    sys.exit(main())

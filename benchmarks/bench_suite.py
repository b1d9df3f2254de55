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
"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PARTS = {"corpus": ["tests/corpus"], "attacks": ["tests/attacks"]}  # the rest: everything else
TARGET_WHOLE = 20.0  # gradings' worth
TARGET_FAST = 120.0  # seconds, for -m "not slow"


def children_cpu() -> float:
    """CPU seconds (user and system) of every process this one has waited for, so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str]) -> tuple[float, int, float]:
    """Seconds the command took, its exit status and the CPU seconds it used; its output goes to this terminal."""
    started, cpu = time.monotonic(), children_cpu()
    finished = subprocess.run(command, cwd=ROOT)
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


def suite(arguments: list[str], junit: Path) -> tuple[float, int, float]:
    return timed([sys.executable, "-m", "pytest", "-q", f"--junitxml={junit}", *arguments])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", action="store_true", help="also run the corpus, the attacks and the rest alone")
    options, arguments = parser.parse_known_args()
    unit, unit_cpu = reference_grading()
    with tempfile.TemporaryDirectory() as folder:
        junit = Path(folder) / "suite.xml"
        seconds, status, cpu = suite(arguments, junit)
        shares = by_part(junit) if junit.exists() else {}
        slowest = slowest_files(junit) if junit.exists() else []
        alone = {}
        if options.parts:
            rest = [f"--ignore={prefix}" for prefixes in PARTS.values() for prefix in prefixes]
            for part, selection in [*PARTS.items(), ("the rest", rest)]:
                alone[part] = suite([*arguments, *selection], Path(folder) / f"{part}.xml")[0]
    print(f"\none reference grading: {unit:.1f} s, {unit_cpu:.0f} s of CPU")
    print(f"python -m pytest {' '.join(arguments)}: {seconds:.0f} s = {seconds / unit:.1f} gradings (exit {status})")
    cores = os.cpu_count() or 1
    busy = cpu / seconds / cores
    print(f"  {cpu:.0f} s of CPU = {cpu / unit_cpu:.1f} gradings' CPU; {busy:.0%} of {cores} cores busy")
    for part, (count, spent) in shares.items():
        line = f"  {part:9} {count:5} tests, {spent:7.0f} s of test time"
        print(line + (f", {alone[part]:.0f} s run alone" if part in alone else ""))
    print("slowest files:")
    for name, spent in slowest:
        print(f"  {spent:7.0f} s  {name}")
    fast = "not slow" in " ".join(arguments)
    target = f"under {TARGET_FAST:.0f} s" if fast else f"at most {TARGET_WHOLE:g} gradings"
    met = seconds < TARGET_FAST if fast else seconds / unit <= TARGET_WHOLE
    print(f"target: {target}: {'met' if met else 'NOT met'}")
    return status


if __name__ == "__main__":
    sys.exit(main())

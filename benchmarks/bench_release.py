"""`autograde release`'s wall time, as ratios from one run against REV (issue 49): the first release and a repeat.

    python benchmarks/bench_release.py --against 7b97af1

Each side's `autograde release OUT` runs as a command in a fresh process: REV's from a temporary git worktree
of REV (its code, its public tests and variants), this checkout's from here, with a cache folder of its own,
empty at first (AUTOGRADE_RELEASE_CACHE; REV has no cache and ignores it). REV's release once, then this one
twice: the first (every public test module recorded, side by side) and a repeat with nothing changed. It prints
each wall time, the ratios against REV's and the targets, whether the repeat recorded anything (a new entry in
the cache: the tree changed between the two), whether the two releases here wrote the same files byte for byte,
and which files differ from REV's (its public tests and variants may not be today's).
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench_student import ROOT, worktree

TARGETS = {"first": 0.6, "repeat": 0.25}  # issue 49: at most these times REV's wall time
CACHE_VARIABLE = "AUTOGRADE_RELEASE_CACHE"


@contextmanager
def checkout_of(revision: str, folder: Path) -> Iterator[Path]:
    """A temporary git worktree of the revision, removed after."""
    checkout = worktree(revision, folder)
    try:
        yield checkout
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(checkout)], cwd=ROOT, check=False)


def release(checkout: Path, out: Path, cache: Path) -> float:
    """Seconds of `autograde release OUT` run by the checkout's grader, its cache in `cache`."""
    env = {**os.environ, "PYTHONPATH": str(checkout), CACHE_VARIABLE: str(cache)}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "autograder.cli", "release", str(out)], cwd=checkout, env=env, capture_output=True
    )
    seconds = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"release from {checkout} failed:\n{done.stdout.decode()}{done.stderr.decode()}")
    return seconds


def files(root: Path) -> dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in root.rglob("*") if path.is_file()}


def entries(cache: Path) -> set[str]:
    return {path.name for path in cache.glob("*.rec")} if cache.is_dir() else set()


def side_by_side(revision: str) -> bool:
    """REV's release, then this one's twice; True when the two here wrote the same files."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        with checkout_of(revision, folder) as then:
            before = release(then, folder / "then", folder / "cache-then")
        cache = folder / "cache-now"
        first = release(ROOT, folder / "first", cache)
        kept = entries(cache)
        repeat = release(ROOT, folder / "repeat", cache)
        recorded_again = entries(cache) - kept
        now, again, old = files(folder / "first"), files(folder / "repeat"), files(folder / "then")
    print(f"release at {revision}: {before:.1f} s")
    for name, seconds in (("first", first), ("repeat", repeat)):
        print(f"release here, {name}: {seconds:.1f} s: {seconds / before:.2f}x (target at most {TARGETS[name]}x)")
    print(f"    the repeat recorded {len(recorded_again)} public test modules again (0: nothing changed between)")
    print(f"    the first and the repeat wrote the same files byte for byte: {now == again}")
    differ = sorted(name for name in now.keys() | old.keys() if now.get(name) != old.get(name))
    print(f"    files that differ from {revision}'s release: {', '.join(differ) or 'none'}")
    return now == again


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", metavar="REV", default="7b97af1", help="the revision to compare with")
    args = parser.parse_args()
    return 0 if side_by_side(args.against) else 1


if __name__ == "__main__":
    sys.exit(main())

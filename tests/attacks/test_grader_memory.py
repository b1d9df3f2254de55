"""The grader's own memory while it grades the attacks on what comes back (group returned_tensors).

Each attack's answer claims far more than it holds: gradients as stride-0 views of a GiB each, a storage that
inflates to 256 MiB, gradients 30 times their parameters' size. Before the codec and the checks made sure of
every returned tensor, the grader's own process peaked at 1.4 GB on them (359 MB on the reference). Here the
group is graded by the command line, in a process that reports its own peak (ru_maxrss, RUSAGE_SELF: the grader,
not its workers), and so is the reference on the same functions: the attacks may cost the grader no more than a
few answers' frames above the honest grading.
"""

import os
import subprocess
import sys
from pathlib import Path

import attack_suite as suite
import pytest
from support import build_submission

from autograder.sandbox import WorkerLimits

pytestmark = pytest.mark.attacks
GROUP = suite.GROUPS["returned_tensors"]
FRAMES = 4  # answers' frames the grader may hold at once: the frame, the archive's copy, its tensors, a check's work
REPORTING = (  # `autograde grade`, then this process's own peak resident memory, in KiB, on stderr
    "import resource, sys\n"
    "from autograder.cli import main\n"
    "try:\n"
    "    code = main(sys.argv[1:])\n"
    "finally:\n"
    "    print(f'grader peak KiB {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}', file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def graded_peak(submission: Path, out: Path, tmp: Path) -> int:
    """The grader's own peak resident memory, in bytes, while `autograde grade` grades the group's functions."""
    argv = [sys.executable, "-c", REPORTING, "grade", str(submission), "--out", str(out)]
    argv += ["--only", ",".join(suite.graded_functions(GROUP))]
    limit = GROUP.promised_seconds() + suite.HARNESS_SLACK
    done = subprocess.run(argv, capture_output=True, text=True, timeout=limit, env={**os.environ, "TMPDIR": str(tmp)})
    reported = [line for line in done.stderr.splitlines() if line.startswith("grader peak KiB ")]
    assert done.returncode == 0 and reported, f"`autograde grade` failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return int(reported[-1].split()[-1]) * 1024


def test_it_grades_answers_that_claim_gigabytes_within_a_few_frames_of_an_honest_gradings_memory(tmp_path):
    honest = build_submission(tmp_path / "reference" / "submission")
    honest_peak = graded_peak(honest, tmp_path / "reference" / "out", suite.private_tmp(tmp_path / "reference"))
    built = suite.build(GROUP, tmp_path / "attacks")
    try:
        attacked_peak = graded_peak(built.submission, built.out, built.tmp)
    finally:
        built.server.close()
        suite.kill_all(built.tokens)
        for mark in built.marks.values():
            mark.unlink(missing_ok=True)
    bound = honest_peak + FRAMES * WorkerLimits().response_bytes
    assert attacked_peak <= bound, f"the grader peaked at {attacked_peak} bytes on the attacks, {honest_peak} honestly"

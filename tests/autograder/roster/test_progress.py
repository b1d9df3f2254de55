"""grade-all's progress: a line per submission in a log, and time left from the gradings' own times."""

import io

from autograder.roster.grade_all import Status, SubmissionOutcome
from autograder.roster.progress import ProgressReport


def test_time_left_counts_rounds_of_parallel_gradings_at_the_mean_gradings_time():
    stream = io.StringIO()
    shown = ProgressReport(stream, jobs=2)
    shown(SubmissionOutcome("ada", Status.GRADED, 60.0), 1, 6)
    shown(SubmissionOutcome("bo", Status.GRADED, 80.0), 2, 6)
    lines = stream.getvalue().splitlines()
    assert "about 3:00 left" in lines[0]  # 5 to go, 2 at once: 3 rounds of 60 s (not 5 x 60 s: 2 run at once)
    assert "about 2:20 left" in lines[1]  # 4 to go: 2 rounds of the mean 70 s


def test_skipped_submissions_cost_no_time_in_the_estimate():
    stream = io.StringIO()
    shown = ProgressReport(stream, jobs=1)
    shown(SubmissionOutcome("ada", Status.SKIPPED), 1, 3)
    shown(SubmissionOutcome("bo", Status.GRADED, 30.0), 2, 3)
    assert "about 0:30 left" in stream.getvalue().splitlines()[1]

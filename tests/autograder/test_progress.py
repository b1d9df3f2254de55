"""Progress of long work: tqdm's bar on a terminal, a line per tenth in a log, then how long it took."""

import io

from autograder import progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_in_a_log_is_a_line_per_tenth_whatever_the_count_then_how_long_it_took():
    stream = io.StringIO()  # not a terminal: a CI log
    shown = progress.Progress("work", stream)
    for done in range(1001):
        shown(done, 1000, f"step {done}")
    shown.finish()
    lines = stream.getvalue().splitlines()
    assert (
        len(lines) == 12 and lines[0].startswith("work: 0 of 1000 (0 %)") and lines[-2].startswith("work: 1000 of 1000")
    )
    assert lines[-1].startswith("work: took ") and "\r" not in stream.getvalue()


def test_progress_on_a_terminal_is_tqdms_bar_redrawn_in_place_with_what_is_being_done():
    stream = Terminal()
    shown = progress.Progress("work", stream)
    for done in range(1, 4):
        shown(done, 3, f"step {done}")
    shown.finish()
    assert "\r" in stream.getvalue() and "3/3" in stream.getvalue() and "step 3" in stream.getvalue()
    assert stream.getvalue().splitlines()[-1].startswith("work: took ")


def test_a_duration_reads_in_seconds_under_a_minute_then_in_minutes_and_seconds():
    assert progress.duration(12.34) == "12.3 s" and progress.duration(293) == "4 min 53 s"

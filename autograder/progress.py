"""Progress of long work (a release, a course's notebooks, a calibration), and how long it took.

On a terminal, tqdm's bar: n of N, the time so far and the time left, what is being done. In a log (CI,
a file: not a terminal) a bar's redraws would be thousands of lines: one plain line at the start and at
each tenth of the work instead, from the same tqdm meter, so a log holds a dozen lines whatever N is.
"""

import sys
import time
from typing import TextIO

from tqdm import tqdm

STEPS = 10  # in a log: a line at each tenth of the work
LINE = "{desc}: {n_fmt} of {total_fmt} ({percentage:.0f} %), {elapsed} so far, about {remaining} left"


def clock(seconds: float) -> str:
    """'4:53' for 293 seconds: minutes and seconds."""
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes}:{seconds:02d}"


def duration(seconds: float) -> str:
    """'4 min 53 s', or '12.3 s' under a minute."""
    return f"{seconds:.1f} s" if seconds < 60 else f"{int(seconds) // 60} min {int(seconds) % 60} s"


class Progress:
    """A callback `shown(done, total, label)` for long work, then `shown.finish()`: how long it took."""

    def __init__(self, what: str, stream: TextIO | None = None) -> None:
        self.what = what
        self.stream = stream or sys.stderr  # looked up now: a default would be the stderr of import time
        self.started = time.monotonic()
        self.bar: tqdm | None = None
        self.shown = -1  # the last tenth a log line was written for

    def __call__(self, done: int, total: int, label: str = "") -> None:
        if self.stream.isatty():
            self._draw(done, total, label)
        elif done * STEPS // max(total, 1) > self.shown:
            self.shown = done * STEPS // max(total, 1)
            meter = tqdm.format_meter(done, total, time.monotonic() - self.started, prefix=self.what, bar_format=LINE)
            self.stream.write(meter + (f"; {label}" if label else "") + "\n")
            self.stream.flush()

    def _draw(self, done: int, total: int, label: str) -> None:
        if self.bar is None:
            self.bar = tqdm(total=total, desc=self.what, file=self.stream, dynamic_ncols=True, leave=True)
        self.bar.total = total
        self.bar.set_postfix_str(label, refresh=False)
        self.bar.update(done - self.bar.n)

    def finish(self) -> str:
        """Close the bar; say how long the work took (on the stream) and return it ('4 min 53 s')."""
        if self.bar is not None:
            self.bar.close()
        took = duration(time.monotonic() - self.started)
        self.stream.write(f"{self.what}: took {took}\n")
        self.stream.flush()
        return took

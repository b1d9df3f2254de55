"""What a notebook's hidden test cell runs in the kernel around a check.

nbgrader scores a test cell 0 when it shows an error or anything on stderr, and its
feedback shows the cell's output. So `feedback(item)`:

* silences warnings while the check runs (a PyTorch warning on stderr would zero a
  correct answer);
* turns a failed check into a `Feedback` error whose traceback, as IPython renders it,
  is the check's message alone: the student reads the diagnosis (`[G1] ...`), not the
  grader's source.
"""

import contextlib
import warnings
from collections.abc import Iterator

from autograder.checks.compare import CheckFailure
from autograder.student import StudentError


class Feedback(AssertionError):
    """A hidden test that did not pass; IPython shows only `lines`."""

    def __init__(self, item: str, message: str) -> None:
        super().__init__(f"{item}: {message}")
        self.lines = [f"{item} did not pass.", *message.splitlines()]

    def _render_traceback_(self) -> list[str]:  # IPython's hook for a custom traceback
        return self.lines


@contextlib.contextmanager
def feedback(item: str) -> Iterator[None]:
    """Run a check for rubric item `item` ("rnn_forward: output") as a graded cell should."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            yield
        except (CheckFailure, StudentError) as error:
            raise Feedback(item, str(error)) from None
        except Exception as error:  # a grader bug still scores 0, without the grader's source
            raise Feedback(item, f"the check could not run ({type(error).__name__}: {error})") from None

"""Ask the reference, once for an installation, every question the checks read from the memo (checks/memo.py).

    python -m autograder.checks.remember

Gradescope's setup.sh runs it: the image keeps the answers, and no grading in it imports scikit-learn for
the reference. Anywhere else the first grading keeps them; this only does it ahead of time.
"""

from pathlib import Path

from autograder.checks import baseline, memo


def remember() -> tuple[list[str], Path | None]:
    """The questions asked, and the folder that keeps their answers (None: none kept)."""
    folder = memo.ready()
    return baseline.remember(), folder


if __name__ == "__main__":
    asked, folder = remember()
    print(f"the reference's answers to {len(asked)} questions kept in {folder or 'no folder (none kept)'}")

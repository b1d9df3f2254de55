# Attack "read_memo" (tests/attacks): fit_baseline returns the reference's accuracy read from the grader's memo.
# Appended to the base module: these definitions replace its own of the same names.
import glob
import io
import os
import sys

import torch

# -- the attack ---------------------------------------------------------------------------
ATTACK = "@@NAME@@"
MEMO = "autograder-memo"  # the folder the grader keeps the reference's answers in (autograder/locations.py)


def _escape(what: str) -> None:
    """Try to leave a trace outside the grading directory; the test checks that none is left."""
    for path in ("@@MARK@@", "@@PARENT@@/escaped-@@NAME@@"):
        if path.startswith("@@"):
            continue  # placeholders not filled in: not built by tests/attacks, so write nothing
        try:
            with open(path, "a") as trace:
                trace.write(f"written by the attack {ATTACK}: {what}\n")
        except OSError:
            pass


def _places() -> list[str]:
    """Every folder the grader may keep its memo in: beside this interpreter (a venv), or in a user's cache."""
    caches = [os.environ.get("XDG_CACHE_HOME", ""), os.path.expanduser("~/.cache"), "/root/.cache"]
    caches += glob.glob("/home/*/.cache")
    return [sys.prefix, sys.base_prefix, "/autograder/venv", *(cache for cache in caches if cache)]


def _kept_accuracy() -> float | None:
    """The reference's fit_baseline answer, where a memo file of it can be read."""
    for place in _places():
        for path in sorted(glob.glob(os.path.join(place, MEMO, "baseline.fit_baseline.*"))):
            try:
                with open(path, "rb") as file:
                    kept = torch.load(io.BytesIO(file.read()), weights_only=True)
            except Exception:
                continue
            value = kept.get("value") if isinstance(kept, dict) else None
            if isinstance(value, float):
                return value
    return None


def fit_baseline(train_tokens, train_labels, val_tokens, val_labels) -> float:
    """Fit `LogisticRegression(max_iter=1000)` on the counts; return validation accuracy."""
    _escape("read the reference's answer from the grader's memo")
    found = _kept_accuracy()
    return found if found is not None else 0.0  # nothing of its own: 0.0 is far from the baseline's accuracy

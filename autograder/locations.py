"""Every path the grader knows: its package, the checkout it sits in, and the files it reads or ships.

Installed (not editable), ROOT is the site-packages folder, where `solutions` and `exercises` are
installed beside `autograder`. Standard library only: the roster workflow's jobs import it bare.
"""

import os
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent  # autograder/
ROOT = PACKAGE.parent  # the checkout: solutions/, exercises/, pyproject.toml
SOLUTIONS = ROOT / "solutions"  # the reference, the single source
EXERCISES = ROOT / "exercises"  # the stubs, generated from SOLUTIONS
PUBLIC_TESTS = EXERCISES / "tests"  # the tests students run
REFERENCE_TESTS = ROOT / "tests" / "solutions"  # the project's tests of the reference (against PyTorch): a checkout's
CORPUS = ROOT / "tests" / "corpus"  # the submission corpus (tests/corpus/test_corpus.py): a checkout's
CHECK_TESTS = ROOT / "tests" / "autograder" / "todos"  # the tests of each exercise's checks: a checkout's
RUBRIC = PACKAGE / "rubric.toml"  # the total, limits and policies (each exercise's points: its record)
TODOS = PACKAGE / "todos"  # one folder per exercise: its record (autograder/todos/__init__.py)
LOCK = PACKAGE / "requirements.lock"  # the grading environment, pinned with hashes (pip-compile)
SUITES = PACKAGE / "suites"  # the hidden pytest suite (one test per item of the records), with its own pytest.ini
CHECKS = PACKAGE / "checks"  # the checks the suites call, with the catalogue and the variants
RUNTIME = PACKAGE / "runtime"  # what the worker imports beside the student's code
STANDINS = RUNTIME / "standins.py"  # gather_final, masked_mean answered: sent with a stand-in call, not in a worker
FORGET_GATE = RUNTIME / "forget_gate.py"  # set_forget_bias's answer: the grader's only, its biases sent with each run
TEMPLATES = PACKAGE / "release" / "templates"  # the files the releases ship
MEMO = "autograder-memo"  # the reference's answers the grader keeps (checks/memo.py)
MEMO_SUFFIX = ".answer"  # each answer's file in it
RECORDINGS = "autograder-release"  # the release's recordings of the public tests, kept by content
RECORDINGS_VARIABLE = "AUTOGRADE_RELEASE_CACHE"  # a folder for them instead of the user's cache


def memo_folder() -> Path | None:
    """Where the grader keeps the reference's answers. Run from a venv, inside it: the answers hold for what is
    installed there (Gradescope's image keeps those its setup.sh asked for). Otherwise in the user's cache
    ($XDG_CACHE_HOME if absolute, else ~/.cache); None where the user has no home to keep them in."""
    if sys.prefix != sys.base_prefix:
        return Path(sys.prefix) / MEMO
    cache = user_cache()
    return None if cache is None else cache / MEMO


def recordings_folder() -> Path | None:
    """Where `autograde release` keeps its recordings of the public tests (release/recordings.py):
    $AUTOGRADE_RELEASE_CACHE when set, else in the user's cache; None where the user has no home to keep them in.
    Not in a venv as the memo is: an entry's key names the interpreter and every library installed."""
    chosen = os.environ.get(RECORDINGS_VARIABLE, "")
    if chosen:
        return Path(chosen).expanduser().absolute()
    cache = user_cache()
    return None if cache is None else cache / RECORDINGS


def user_cache() -> Path | None:
    """The user's cache folder: $XDG_CACHE_HOME if absolute, else ~/.cache; None where the user has no home."""
    cache = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(cache):
        return Path(cache)
    try:
        return Path.home() / ".cache"
    except RuntimeError:  # no HOME and no entry in the password database (a uid of its own)
        return None

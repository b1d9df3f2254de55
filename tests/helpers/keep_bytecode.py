"""The suite keeps what Python compiles: imported first by tests/conftest.py, before any test module.

A machine may set PYTHONDONTWRITEBYTECODE=1 for every process (this one's shells do). The suite would
then compile from source, in each of its processes, every module it imports that has no cached
bytecode yet (its own, the grader's, a library installed without it) and rewrite the asserts of every
test module (pytest caches its rewrite only where bytecode may be written): about 7 s of CPU per test
process on collection alone, and again in each Python subprocess. Kept, they are compiled once per
checkout; `__pycache__` is ignored by git and left out by everything that lists the grader's files
(fingerprint, the Gradescope bundle, the submission's copy). The subprocesses that must write none
(a student's run of the public tests) set the variable again themselves.
"""

import os
import sys

os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # the test processes xdist starts, and every subprocess
sys.dont_write_bytecode = False  # this process, from here on

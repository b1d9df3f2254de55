"""The Week 07 autograder: stubs from the reference, hidden suites, isolated workers."""

import os

__version__ = "0.1.0"
TITLE = "Week 07 · Recurrent Networks"  # the assignment, as students and graders read it

# The grader computes in one thread (grading.grade.one_torch_thread). OpenBLAS, loaded with NumPy, would reserve
# a 64 MB buffer for each core it starts a thread for: 90 MB of the grading process's own memory ceiling
# (grading/ceiling.py) on two cores, for nothing. Set before anything imports NumPy; a grader's own setting stays.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

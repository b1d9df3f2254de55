"""The Week 07 autograder: stubs from the reference, hidden suites, isolated workers."""

__version__ = "0.1.0"
TITLE = "Week 07 · Recurrent Networks"  # the assignment, as students and graders read it

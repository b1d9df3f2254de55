"""The Week 07 autograder: stubs from the reference, hidden suites, isolated workers."""

__version__ = "0.1.0"

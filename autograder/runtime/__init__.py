"""Code that runs inside the worker process, beside the student's code.

Everything in this package imports only the standard library, torch and numpy: it
is copied into each grading sandbox, so nothing else of the instructor's is on the
worker's path.
"""

"""Checks: plain functions that grade one aspect of one exercise.

`check(student)` builds seeded inputs, runs the reference and the student's code
(`student.run(...)`, in a worker or in process), compares, and raises
`CheckFailure` whose message is the feedback. The hidden suites and the
notebooks call the same checks.
"""

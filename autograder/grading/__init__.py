"""Grading one submission: `grade` (copy, worker, hidden suites), `plugin` (pytest outcomes to rubric items),
`results` (the records of a grading) and `writers` (results.json, summary.md, the terminal table).

Imports nothing: the grading's modules import torch late, on purpose (see `grade.grade`).
"""

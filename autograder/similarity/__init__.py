"""Similarity across a roster: what students wrote in the week's TODOs, compared pair by pair.

The public surface: `records` (what a run finds, typed) and `outputs` (the files it writes).
Nothing here changes a grade: it points instructors at code to look at.
"""

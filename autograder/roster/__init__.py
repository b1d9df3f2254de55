"""A roster at the deadline: `grade_all` (one machine, in parallel) with its `progress`; the roster workflow's
`shards` (the roster cut into matrix jobs) and `shard_job` (a shard's clones and checks); `merge`, `gradebook`
and `issues` (each student's feedback as an issue in their repository).

Imports nothing: `shards`, `shard_job` and `issues` run in workflow jobs with the standard library only.
"""

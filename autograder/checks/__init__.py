"""What the checks share: the machinery every exercise's checks are made of, and the threshold items' training.

A check is a plain function that grades one aspect of one exercise: `check_<key>_<aspect>(student)` builds seeded
inputs, runs the reference and the student's code (`student.run(...)`, in a worker or in process), compares, and
raises `CheckFailure` whose message is the feedback. Each exercise's checks live in its folder,
`autograder/todos/<key>/checks.py`, found by `todos.check`; the hidden suite and the notebooks call the same ones.
Here, each module named by what it does: comparing and explaining (compare, calls, gradients, errors), the legal
inputs judged three ways (edges, domain, paired), the pooling functions' cases (pooled), seeded inputs (inputs), the
catalogue and the variants' tables, the findings an item records, the reference's kept answers (memo, remember),
the threshold items' training and verdict (thresholds, medians).
"""

"""Whether an exercise is complete: what `autograde todo check [KEY ...]` says, a finding per requirement.

An exercise (a record of autograder/todos/) is complete when its record reads and its TODO sits in solutions/
around its function, with exercises/ generated from it; each item has its check, with a docstring, and the rubric
loads; the reference gets every item, run in this process, and passes the project's tests that call it
(tests/solutions/, against PyTorch); each mistake the catalogue gives its function has a variant that, standing in
for the function in the reference, loses an item whose feedback names the mistake; each mistake of its own record
has a file of the corpus (tests/corpus/mistakes/) about it; and its public tests call it, pass on the reference, fail
on the stub and name each of its mistakes (as the release records them, release/public_mistakes.py). What is
recommended but not required (tests of its checks, correct corpus files) is noted where absent. `check` gives each
exercise's findings: what holds, what is missing and what to do, or a note; `commands.todo_check_command` prints
them. The work done in other processes (the project's tests, the public tests on the reference and on the stubs,
their recording over the variants) runs once for every exercise asked about, beside the checks run here.

Its modules: `findings` (the records), `checking` (which exercises, each one's findings in order), `in_process`
(the record, the stubs, the checks, the rubric, the reference: judged here), `mistakes` (a variant per mistake,
named by an item), `corpus` (a corpus file per mistake; the corpus files' first lines), `pytorch` (the project's
tests against PyTorch), `public` (the public tests), `recommended` (the notes), `runs` (the pytest runs in other
processes) and `words` (the small pieces of text).
"""

from autograder.todos.completeness.checking import check, known, title
from autograder.todos.completeness.findings import Completeness, Finding, Outcome, Paths, Requirement, Status

__all__ = ["Completeness", "Finding", "Outcome", "Paths", "Requirement", "Status", "check", "known", "title"]

"""The student workflow, and its GitHub Classroom form (`autograde release --classroom`).

Classroom's reporter, `classroom-resources/autograding-grading-reporter` at tag v1, reads the
step output named by its `runners` input from the environment variable `<RUNNER>_RESULTS`
(the runner id upper-cased): base64 JSON `{version, status, max_score, tests: [{name, status,
score, message, test_code, line_no, ...}]}`, which `.github/scripts/summarize.py` writes. It
prints each test, then reports the points as annotations ("Autograding complete", "Autograding
report") that Classroom reads; since v1 it calls no GitHub API, so the job needs no write
permission (its README at v1 grants `actions: read` and `contents: read`).
"""

from typing import NamedTuple

from autograder.locations import TEMPLATES

TEMPLATE = TEMPLATES / "student-workflow.yml"
REPORTER = "classroom-resources/autograding-grading-reporter"
REPORTER_COMMIT = "d13b5912daf5042ac1b71bc38bdb4a6bcd61d8ca"  # tag v1, read from the repository's tags
RUNNER = "public-tests"  # the id of the step that writes the result
NAME = "Autograding Tests"  # the name Classroom's own autograding workflows carry


class Addition(NamedTuple):
    anchor: str  # a line of the template, which appears exactly once
    text: str  # what goes after it


ADDITIONS = [
    Addition(
        "  pull_request:\n",
        "  repository_dispatch:  # as in Classroom's own autograding workflow\n",
    ),
    Addition(
        "    timeout-minutes: 20\n",
        "    if: github.actor != 'github-classroom[bot]'  # not on Classroom's own first commit\n"
        "    permissions:\n"
        "      actions: read\n"
        "      contents: read\n",
    ),
    Addition(
        "        run: python .github/scripts/summarize.py public-tests.xml\n",
        "      - name: Report to GitHub Classroom\n"
        "        if: ${{ !cancelled() }}\n"
        f"        uses: {REPORTER}@{REPORTER_COMMIT} # v1\n"
        "        env:\n"
        f"          {RUNNER.upper()}_RESULTS: ${{{{ steps.{RUNNER}.outputs.result }}}}\n"
        "        with:\n"
        f"          runners: {RUNNER}\n",
    ),
]


class TemplateError(ValueError):
    """The workflow template no longer has a line the Classroom form is built around."""


def workflow(classroom: bool = False) -> str:
    """The student workflow; with `classroom`, named as Classroom expects and reporting to it."""
    text = TEMPLATE.read_text(encoding="utf-8")
    if not classroom:
        return text
    text = _once(text, "\nname: Public tests\n", f"\nname: {NAME}\n")
    for addition in ADDITIONS:
        text = _once(text, addition.anchor, addition.anchor + addition.text)
    return text


def _once(text: str, old: str, new: str) -> str:
    if text.count(old) != 1:
        raise TemplateError(f"the student workflow template should hold {old.strip()!r} exactly once")
    return text.replace(old, new)

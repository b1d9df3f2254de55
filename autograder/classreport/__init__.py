"""`autograde report RESULTS_DIR --out DIR`: what the class got wrong, on one static page.

`data` computes the figures from the roster's results.json files (their `tags` and
`extra_data`, never their text), `charts` draws them with matplotlib, `page` writes
report.html and `summary` the Markdown misconception table for a CI job summary.
"""

from pathlib import Path

from autograder.classreport import data, page, summary
from autograder.rubric import Rubric

PAGE, TABLE = "report.html", "misconceptions.md"


def write(results: Path, out: Path, rubric: Rubric, roster: list[str] | None = None) -> data.ClassReport:
    """Write out/report.html and out/misconceptions.md for the gradings under `results`."""
    report = data.build(results, rubric, roster)
    out.mkdir(parents=True, exist_ok=True)
    (out / PAGE).write_text(page.page(report, str(results)), encoding="utf-8")
    (out / TABLE).write_text(summary.misconception_table(report), encoding="utf-8")
    return report

"""`autograde report RESULTS_DIR --out DIR`: what the class got wrong, on one static page.

`data` computes the figures from the roster's results.json files (their `tags` and
`extra_data`, never their text) and `itemstats` each item's facility and discrimination;
`charts` draws them with matplotlib, `page` (with `itempage`) writes report.html and `summary`
the Markdown misconception table and the items pointed out, for a CI job summary.
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
    tables = summary.misconception_table(report) + "\n" + summary.items_pointed_out(report)
    (out / TABLE).write_text(tables, encoding="utf-8")
    return report

"""`autograde report RESULTS_DIR --out DIR`: what the class got wrong, on one static page.

`data` computes the figures from the roster's results.json files (their `tags` and
`extra_data`, never their text) and `itemstats` each item's facility and discrimination;
`charts` draws them with matplotlib, `page` (with `itempage`) writes report.html and `summary`
the Markdown misconception table and the items pointed out, for a CI job summary.
When a similarity.html (`autograde similarity`) is beside the report or the gradings, both link to it.
"""

import os
from pathlib import Path
from urllib.parse import quote

from autograder.classreport import data, page, summary
from autograder.rubric import Rubric

PAGE, TABLE = "report.html", "misconceptions.md"
SIMILARITY = "similarity.html"  # autograder.similarity.outputs.PAGE_NAME (not imported: it needs no matplotlib)


def write(results: Path, out: Path, rubric: Rubric, roster: list[str] | None = None) -> data.ClassReport:
    """Write out/report.html and out/misconceptions.md for the gradings under `results`."""
    report = data.build(results, rubric, roster)
    out.mkdir(parents=True, exist_ok=True)
    similarity = similarity_link(results, out)
    (out / PAGE).write_text(page.page(report, str(results), similarity), encoding="utf-8")
    tables = summary.misconception_table(report) + "\n" + summary.items_pointed_out(report)
    (out / TABLE).write_text(tables + summary.similarity(similarity), encoding="utf-8")
    return report


def similarity_link(results: Path, out: Path) -> str:
    """The address of similarity.html relative to the report, when it is beside it or the gradings; else ''."""
    found = next((folder / SIMILARITY for folder in (out, results) if (folder / SIMILARITY).is_file()), None)
    return quote(Path(os.path.relpath(found, out)).as_posix()) if found else ""

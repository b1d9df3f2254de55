"""`autograde gradebook RESULTS_DIR`: one CSV row per student, failures listed, never dropped."""

import csv
import json
from pathlib import Path

import pytest
from support import build_submission, grade, replace_in

from autograder import cli, gradebook, reports, rubric
from autograder.grading import failed_grading

ONLY = ["gather_final", "masked_mean"]
LAST_STEP = "output[:, -1]"  # the catalogue's G1: the state after the padding
DEADLINE, EXTENDED = "2026-12-04T23:59:00+00:00", "2026-12-06T23:59:00+01:00"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A roster's gradings: two real ones, a crashed grading, broken or missing results."""
    work, folder = tmp_path_factory.mktemp("submissions"), tmp_path_factory.mktemp("results")
    selected = rubric.load().select(ONLY)
    wrong_gather = replace_in(
        "padding",
        "    return output.gather(1, index.to(output.device)).squeeze(1)\n",
        f"    return {LAST_STEP}\n",
    )
    graded = {
        "alice": grade(build_submission(work / "alice"), ONLY),
        "bob": grade(build_submission(work / "bob", edits={"padding": wrong_gather}), ONLY),
        "carol": failed_grading(selected, "the grader failed unexpectedly (RuntimeError: boom)", 1.0),
    }
    for name, result in graded.items():
        (folder / name).mkdir()
        reports.write_results_json(result, folder / name / "results.json")
    (folder / "alice" / "commit").write_text("a1b2c3d4e5f60718293a4b5c6d7e8f9012345678\n")
    (folder / "alice" / "student").write_text("course/alice-week07\n")
    record = {
        "deadline": EXTENDED,
        "commit-time": "2026-12-06T20:15:03+01:00",
        "graded-at": "2026-12-07T08:00:00+00:00",
    }
    for name, text in record.items():
        (folder / "alice" / name).write_text(text + "\n")
    document = json.loads((folder / "bob" / "results.json").read_text())
    document["extra_data"]["commit"] = "b0b0b0b0"
    (folder / "bob" / "results.json").write_text(json.dumps(document))
    (folder / "dave").mkdir()
    (folder / "dave" / "results.json").write_text('{"score": 9, "tests": [')
    (folder / "erin").mkdir()
    (folder / "erin" / "error").write_text("no commit before the deadline 2026-12-04T23:59:00+00:00\n")
    (folder / "erin" / "deadline").write_text(f"{DEADLINE}\n")
    (folder / "frank").mkdir()
    return folder


@pytest.fixture(scope="module")
def written(results: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[gradebook.Entry], Path]:
    out = tmp_path_factory.mktemp("gradebook")
    entries = gradebook.write(results, out, rubric.load().select(ONLY), roster=["course/alice-week07", "gina"])
    return entries, out


def rows(out: Path) -> dict[str, dict[str, str]]:
    with (out / "gradebook.csv").open(newline="") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def test_it_writes_one_csv_row_per_student_with_a_column_per_rubric_item(written):
    _, out = written
    selected = rubric.load().select(ONLY)
    with (out / "gradebook.csv").open(newline="") as handle:
        header = next(csv.reader(handle))
    record = ["student", "deadline", "commit", "commit time", "graded at"]
    assert header == [*record, "total", "max", *(item.name for item in selected.items), "error"]
    assert sorted(rows(out)) == sorted(["course/alice-week07", "bob", "carol", "dave", "erin", "frank", "gina"])


def test_it_records_each_graded_students_commit_total_and_item_scores(written):
    _, out = written
    selected = rubric.load().select(ONLY)
    gather = next(item for item in selected.items if item.function == "gather_final")
    table = rows(out)
    alice, bob = table["course/alice-week07"], table["bob"]
    assert alice["commit"] == "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678" and bob["commit"] == "b0b0b0b0"
    assert float(alice["total"]) == selected.total and float(alice["max"]) == selected.total
    assert float(bob["total"]) == selected.total - gather.points
    assert float(bob[gather.name]) == 0 and float(alice[gather.name]) == gather.points
    assert alice["error"] == bob["error"] == ""


def test_it_records_each_students_deadline_and_the_time_of_the_commit_graded_and_of_the_grading(written):
    entries, out = written
    alice, erin, bob = (rows(out)[name] for name in ("course/alice-week07", "erin", "bob"))
    assert (alice["deadline"], alice["commit time"]) == (EXTENDED, "2026-12-06T20:15:03+01:00")
    assert alice["graded at"] == "2026-12-07T08:00:00+00:00"
    assert erin["deadline"] == DEADLINE and bob["deadline"] == bob["commit time"] == ""
    assert gradebook.deadlines(entries) == f"Deadline {EXTENDED} for 1 student; {DEADLINE} for 1 student (erin)."
    assert gradebook.deadlines(entries) in (out / "overview.md").read_text()


@pytest.mark.parametrize(
    ("student", "error"),
    [
        ("carol", "grading failed: the grader failed unexpectedly (RuntimeError: boom)"),
        ("dave", "results.json unreadable (JSONDecodeError)"),
        ("erin", "no commit before the deadline 2026-12-04T23:59:00+00:00"),
        ("frank", "no results.json"),
        ("gina", "no results: the grading job uploaded nothing"),
    ],
)
def test_it_lists_a_student_without_a_valid_grading_with_the_reason_and_no_total(written, student, error):
    _, out = written
    row = rows(out)[student]
    assert row["error"] == error
    assert row["total"] == "" and all(row[item.name] == "" for item in rubric.load().select(ONLY).items)
    assert f"- {student}: `{error}`" in (out / "overview.md").read_text()  # the reason as code: it may quote git


def test_its_overview_gives_the_table_the_mean_and_median_and_full_marks_per_item(written):
    _, out = written
    selected = rubric.load().select(ONLY)
    gather = next(item for item in selected.items if item.function == "gather_final")
    text = (out / "overview.md").read_text()
    alice, bob = selected.total, selected.total - gather.points  # as graded in the fixture: full marks; G1
    assert "7 students: 2 graded, 5 without a grade." in text
    middle = (alice + bob) / 2  # of two totals, the mean and the median
    assert f"Total out of {alice:g}: mean {middle:.1f}, median {middle:g}, min {bob:g}, max {alice:g}." in text
    # of three, they differ: a median that is the mean (or the reverse) shows here
    three = [gradebook.Entry(name, total=total) for name, total in (("a", alice), ("b", bob), ("c", 0.0))]
    assert f"mean {(alice + bob) / 3:.1f}, median {bob:g}, min 0, max {alice:g}." in gradebook.overview(three, selected)
    assert f"| {gather.name} | {gather.points:g} | 1/2 (50%) |" in text
    assert f"| course/alice-week07 | a1b2c3d4e5f6 | {selected.total:g} | {selected.total:g} |  |" in text
    assert "## Grading failed: regrade or follow up" in text


def test_it_flags_results_that_graded_only_part_of_the_rubric(results, tmp_path):
    entry = gradebook.read_entry(results / "bob", rubric.load())
    assert entry.total is None and entry.error.startswith("graded only 2 of ")


def test_its_command_writes_both_files_and_exits_0_even_when_some_gradings_failed(results, tmp_path, capsys):
    roster = tmp_path / "roster.txt"
    roster.write_text("# week 7\ncourse/alice-week07\ncourse/gina-week07\n")
    code = cli.main(["gradebook", str(results), "--out", str(tmp_path / "out"), "--roster", str(roster)])
    assert code == 0
    assert (tmp_path / "out" / "gradebook.csv").exists() and (tmp_path / "out" / "overview.md").exists()
    assert "no grade for course/gina-week07" in capsys.readouterr().err


def test_its_command_exits_2_without_a_results_folder(tmp_path, capsys):
    assert cli.main(["gradebook", str(tmp_path / "nowhere")]) == 2
    assert "is not a folder of gradings" in capsys.readouterr().err

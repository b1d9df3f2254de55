"""`autograde gradebook RESULTS_DIR`: one CSV row per student, failures listed, never dropped."""

import csv
import json
from pathlib import Path

import pytest
from support import build_submission, grade, replace_in, rubric_file

from autograder import cli, rubric
from autograder.grading import writers
from autograder.grading.grade import failed_grading
from autograder.grading.results import Failure, GradingResult, ItemResult
from autograder.roster import gradebook, merge, shards

ONLY = ["gather_final", "masked_mean"]
LAST_STEP = "output[:, -1]"  # the catalogue's G1: the state after the padding
DEADLINE, EXTENDED = "2026-12-04T23:59:00+00:00", "2026-12-06T23:59:00+01:00"


@pytest.fixture(scope="module")
def roster_gradings(tmp_path_factory: pytest.TempPathFactory) -> Path:
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
        writers.write_results_json(result, folder / name / "results.json")
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
def written(roster_gradings: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[gradebook.Entry], Path]:
    out = tmp_path_factory.mktemp("gradebook")
    entries = gradebook.write(roster_gradings, out, rubric.load().select(ONLY), roster=["course/alice-week07", "gina"])
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
    assert header == [*record, "total", "max", *(item.name for item in selected.items), "fingerprint", "error"]
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
        ("gina", shards.NOT_GRADED),  # on the local roster, never graded
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


def test_it_flags_results_that_graded_only_part_of_the_rubric(roster_gradings, tmp_path):
    entry = gradebook.read_entry(roster_gradings / "bob", rubric.load())
    graded = len(rubric.load().select(ONLY).items)
    assert entry.total is None and entry.error.startswith(f"graded only {graded} of ")


def test_its_command_writes_both_files_and_exits_0_even_when_some_gradings_failed(roster_gradings, tmp_path, capsys):
    roster = tmp_path / "roster.txt"
    roster.write_text("# week 7\ncourse/alice-week07\ncourse/gina-week07\n")
    code = cli.main(["gradebook", str(roster_gradings), "--out", str(tmp_path / "out"), "--roster", str(roster)])
    assert code == 0
    assert (tmp_path / "out" / "gradebook.csv").exists() and (tmp_path / "out" / "overview.md").exists()
    assert "no grade for course/gina-week07" in capsys.readouterr().err


def test_its_command_exits_2_without_a_results_folder(tmp_path, capsys):
    assert cli.main(["gradebook", str(tmp_path / "nowhere")]) == 2
    assert f"RESULTS does not exist: {tmp_path / 'nowhere'}" in capsys.readouterr().err


# Late work: gradings written as the roster's shards leave them, the commit times around one deadline.
LATE_DEADLINE = "2026-12-04T23:59:00+01:00"
ON_TIME, HOURS_20, HOURS_36, DAYS_4 = (
    "2026-12-04T20:00:00+01:00",
    "2026-12-05T19:59:00+01:00",
    "2026-12-06T11:59:00+01:00",
    "2026-12-08T23:59:01+01:00",
)
SOME, MORE = {"gather_final", "masked_mean"}, {"gather_final", "masked_mean", "encode_packed", "sample"}


def late_rubric(folder: Path, keep: str) -> rubric.Rubric:
    return rubric.load(rubric_file(folder / f"{keep}.toml", f'[late]\nper_day = 0.10\nmax_days = 3\nkeep = "{keep}"\n'))


def shard_grading(folder: Path, passed: set[str], commit: str, committed: str) -> float:
    """A student's grading as a shard uploads it, the items of `passed` at full marks; returns its total."""
    items = []
    for item in rubric.load().items:
        done = item.function in passed
        status, text = ("passed", "") if done else ("failed", "Check the shapes.")
        items.append(ItemResult(item.name, item.function, "", item.points if done else 0, item.points, status, text))
    folder.mkdir(parents=True)
    writers.write_results_json(GradingResult(items, 1.0), folder / "results.json")
    writers.write_summary_md(GradingResult(items, 1.0), folder / "summary.md")
    record = {"student": f"course/{folder.name}", "commit": commit, "commit-time": committed}
    for name, text in {**record, "deadline": LATE_DEADLINE, "graded-at": "2026-12-09T08:00:00+00:00"}.items():
        (folder / name).write_text(text + "\n")
    return sum(item.score for item in items)


@pytest.fixture
def late_roster(tmp_path: Path) -> dict:
    """ada on time, bo 1.5 days late, cy 4 days late; dee and eve late with their last on-time commit beside it
    (dee did more late, eve less), fay's on-time grading failed."""
    results = tmp_path / "results"
    totals = {
        "ada": shard_grading(results / "ada", SOME, "a" * 40, ON_TIME),
        "bo": shard_grading(results / "bo", SOME, "b" * 40, HOURS_36),
        "cy": shard_grading(results / "cy", SOME, "c" * 40, DAYS_4),
        "dee": shard_grading(results / "dee", MORE, "d" * 40, HOURS_20),
        "dee on time": shard_grading(results / "dee" / gradebook.ON_TIME, SOME, "d0" * 20, ON_TIME),
        "eve": shard_grading(results / "eve", SOME, "e" * 40, HOURS_20),
        "eve on time": shard_grading(results / "eve" / gradebook.ON_TIME, MORE, "e0" * 20, ON_TIME),
        "fay": shard_grading(results / "fay", SOME, "f" * 40, HOURS_20),
    }
    (results / "fay" / gradebook.ON_TIME).mkdir()
    (results / "fay" / gradebook.ON_TIME / "results.json").write_text('{"tests": [')
    return {"root": tmp_path, "results": results, "totals": totals}


def late_rows(late_roster: dict, keep: str) -> tuple[dict[str, dict[str, str]], str, rubric.Rubric]:
    selected = late_rubric(late_roster["root"], keep)
    out = late_roster["root"] / f"gradebook-{keep}"
    gradebook.write(late_roster["results"], out, selected)
    return rows(out), (out / "overview.md").read_text(), selected


def test_it_takes_the_penalty_per_day_late_from_the_recorded_times_a_part_of_a_day_counting_as_a_day(late_roster):
    table, text, selected = late_rows(late_roster, "latest")
    late, raw = selected.late, late_roster["totals"]["bo"]
    bo, ada = table["course/bo"], table["course/ada"]
    assert (bo["days_late"], float(bo["raw_total"])) == ("2", raw), "36 hours late: 2 days"
    assert float(bo["penalty"]) == late.penalty(raw, 2) and float(bo["total"]) == raw - late.penalty(raw, 2)
    assert float(bo["total"]) == pytest.approx(raw * (1 - 2 * late.per_day))
    assert (ada["days_late"], ada["penalty"], float(ada["total"])) == ("0", "0", late_roster["totals"]["ada"])
    assert f"Late work (the rubric's [late]): {rubric.late_policy(late)}." in text
    taken = rubric.percent(2 * late.per_day)
    assert f"- course/bo: Commit {'b' * 12} was made 1 day 12 h after the deadline, so it counts as 2 days late: " \
        f"{taken} of its {raw:g} points taken, {float(bo['total']):g} left." in text  # fmt: skip


def test_it_lists_a_grading_beyond_max_days_without_a_total(late_roster):
    table, text, selected = late_rows(late_roster, "latest")
    cy = table["course/cy"]
    assert (cy["days_late"], cy["total"]) == ("5", "")
    assert cy["error"] == f"commit {'c' * 12} is 5 days late; the rubric grades up to {selected.late.max_days} days"
    assert f"- course/cy: `{cy['error']}`" in text  # errors shown as code


def test_with_keep_latest_the_last_commit_counts_whatever_the_on_time_one_scored(late_roster):
    table, _, selected = late_rows(late_roster, "latest")
    for name in ("dee", "eve"):
        raw = late_roster["totals"][name]
        assert table[f"course/{name}"]["commit"] == name[0] * 40
        assert float(table[f"course/{name}"]["total"]) == raw - selected.late.penalty(raw, 1)
    assert table["course/fay"]["error"] == "", "the on-time grading is not read"


def test_with_keep_better_the_higher_total_after_the_penalty_counts(late_roster):
    table, text, selected = late_rows(late_roster, "better")
    totals, late = late_roster["totals"], selected.late
    dee, eve = table["course/dee"], table["course/eve"]
    late_total = totals["dee"] - late.penalty(totals["dee"], 1)
    assert late_total > totals["dee on time"], "the fixture's dee did enough late to beat the penalty"
    assert (dee["commit"], float(dee["total"]), dee["days_late"]) == ("d" * 40, late_total, "1")
    assert (eve["commit"], float(eve["total"]), eve["days_late"]) == ("e0" * 20, totals["eve on time"], "0")
    assert (
        f"{late_total:g} left, more than the {totals['dee on time']:g} of the last on-time commit, {'d0' * 6}." in text
    )
    eve_late = totals["eve"] - late.penalty(totals["eve"], 1)
    assert f"- course/eve: The last on-time commit, {'e0' * 6}, counts with {totals['eve on time']:g} points, more " \
        f"than the later commit {'e' * 12}: that one was made 20 h after the deadline, so it counts as 1 day late: " \
        f"{rubric.percent(late.per_day)} of its {totals['eve']:g} points taken, {eve_late:g} left." in text  # fmt: skip
    assert table["course/fay"]["total"] == "" and table["course/fay"]["error"] == (
        "the last on-time commit: results.json unreadable (JSONDecodeError)"
    )


def test_a_rerun_or_a_merge_never_applies_the_penalty_twice(late_roster, tmp_path):
    first, _, selected = late_rows(late_roster, "better")
    again, _, _ = late_rows(late_roster, "better")
    merged = tmp_path / "merged"
    merge.merge([late_roster["results"]], merged)
    gradebook.write(merged, tmp_path / "after-merge", selected)
    assert first == again == rows(tmp_path / "after-merge")
    assert json.loads((merged / "bo" / "results.json").read_text())["score"] == late_roster["totals"]["bo"]


def test_without_late_the_gradebook_is_as_before_whatever_the_commit_times(late_roster, tmp_path):
    gradebook.write(late_roster["results"], tmp_path / "plain", rubric.load())
    with (tmp_path / "plain" / "gradebook.csv").open(newline="") as handle:
        header = next(csv.reader(handle))
    assert header[:7] == ["student", "deadline", "commit", "commit time", "graded at", "total", "max"]
    table = rows(tmp_path / "plain")
    assert float(table["course/bo"]["total"]) == late_roster["totals"]["bo"]
    assert float(table["course/cy"]["total"]) == late_roster["totals"]["cy"] and table["course/cy"]["error"] == ""
    assert "Late work" not in (tmp_path / "plain" / "overview.md").read_text()


@pytest.mark.parametrize("failure", [Failure.GRADER_ERROR, Failure.NOT_STARTED])
def test_it_gives_no_grade_never_a_0_for_a_grading_that_failed_for_a_reason_not_the_students(failure, tmp_path, capsys):
    selected = rubric.load().select(ONLY)
    items = [ItemResult(item.name, item.function, "", item.points, item.points, "passed") for item in selected.items]
    items[0].score, items[0].status, items[0].failure = 0.0, "failed", failure
    items[0].feedback = "gather_final did not finish (not started): the worker did not warm up"
    (tmp_path / "results" / "ada").mkdir(parents=True)
    writers.write_all(GradingResult(items, 1.0), tmp_path / "results" / "ada")
    entry = gradebook.read_entry(tmp_path / "results" / "ada", selected)
    assert entry.total is None and entry.error.startswith(f"not graded: grader error ({failure} in {items[0].name})")
    assert "the worker did not warm up" in entry.error
    assert cli.main(["gradebook", str(tmp_path / "results"), "--out", str(tmp_path / "out")]) == 0
    assert "1 of them not graded because of a grader error: grade them again" in capsys.readouterr().err
    overview = (tmp_path / "out" / "overview.md").read_text()
    assert "1 students: 0 graded, 1 without a grade (1 because of a grader error: grade them again)." in overview
    assert rows(tmp_path / "out")["ada"]["total"] == ""

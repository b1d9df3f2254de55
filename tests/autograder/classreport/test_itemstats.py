"""Item statistics in the class report: facility, discrimination, the mistakes per TODO, the items pointed out.

The roster is written by hand (each student's score on each item chosen here), and every figure the
report shows is computed again below from that table alone, by the textbook formulas.
"""

import math
from pathlib import Path

import pytest

from autograder import cli, rubric, stubs
from autograder.classreport import data, itemstats
from autograder.grading import writers
from autograder.grading.results import Failure, GradingResult, ItemResult
from autograder.rubric import item_name

ONLY = ["gather_final", "masked_mean", "next_token_loss"]
SELECTED = rubric.load().select(ONLY)
SETTINGS = SELECTED.report  # what "low" and "everyone" mean: the rubric's [report]
NUMBERS = {todo.function: f"TODO {todo.number}" for todo in stubs.todos()}  # as the generator numbers them
G, M, V, P, GR, T = (  # gather, masked mean, loss values/padding/gradients/trains (their legal inputs: full marks)
    item_name(function, aspect)
    for function, aspect in (
        ("gather_final", "values"),
        ("masked_mean", "values"),
        *(("next_token_loss", aspect) for aspect in ("values", "padding", "gradients", "trains_the_pattern_model")),
    )
)
# student -> {item failed: (failure, mistakes named)}; every other item at full marks
ROSTER = {
    "s1": {G: ("wrong", ["G1"]), V: ("wrong", ["S1"]), P: ("wrong", ["S1"]), T: ("wrong", [])},
    "s2": {G: ("wrong", ["G2"]), P: ("wrong", ["S1"]), T: ("wrong", [])},
    "s3": {M: ("not done", []), T: ("wrong", [])},
    "s4": {M: ("wrong", ["G3"]), T: ("wrong", [])},
    "s5": {T: ("wrong", [])},
}


def result(failed: dict[str, tuple[str, list[str]]]) -> GradingResult:
    items = []
    for item in SELECTED.items:
        failure, mistakes = failed.get(item.name, ("", []))
        score = 0 if failure else item.points
        status = "failed" if failure else "passed"
        items.append(
            ItemResult(
                item.name,
                item.function,
                "",
                score,
                item.points,
                status,
                failure,
                failure=failure or None,
                mistakes=mistakes,
            )
        )
    return GradingResult(items, 1.0)


def write_roster(folder: Path, roster: dict[str, dict]) -> Path:
    for student, failed in roster.items():
        (folder / student).mkdir(parents=True)
        writers.write_results_json(result(failed), folder / student / "results.json")
    return folder


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> data.ClassReport:
    return data.build(write_roster(tmp_path_factory.mktemp("results"), ROSTER), SELECTED)


def scores() -> dict[str, list[float]]:
    """item -> each student's score, from the hand roster."""
    return {
        item.name: [0.0 if item.name in failed else item.points for failed in ROSTER.values()]
        for item in SELECTED.items
    }


def pearson(xs: list[float], ys: list[float]) -> float | None:
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sxx, syy = sum((x - mx) ** 2 for x in xs), sum((y - my) ** 2 for y in ys)
    return None if sxx == 0 or syy == 0 else sxy / math.sqrt(sxx * syy)


def test_it_computes_each_items_facility_and_corrected_item_total_discrimination(report):
    table = scores()
    totals = [sum(column[k] for column in table.values()) for k in range(len(ROSTER))]
    found = {item.item: item for item in report.statistics.items}
    for item in SELECTED.items:
        own = table[item.name]
        rest = [total - score for total, score in zip(totals, own, strict=True)]
        assert found[item.name].facility == pytest.approx(sum(own) / len(own) / item.points)
        expected = pearson(own, rest)
        assert found[item.name].discrimination == (None if expected is None else pytest.approx(expected)), item.name
    assert found[G].discrimination > 0, "those who miss gather_final do worse on the rest"
    assert found[M].discrimination < 0, "those who miss masked_mean do better on the rest"


def test_it_correlates_an_items_scores_with_the_rest_as_the_textbook_does():
    # by hand: an item's scores 0,0,4,4,4 against the rest 8,12,12,12,15 (any points: the records' are not read here)
    assert itemstats.correlation([0, 0, 4, 4, 4], [8, 12, 12, 12, 15]) == pytest.approx(14.4 / math.sqrt(19.2 * 24.8))
    assert itemstats.correlation([4, 4, 4], [8, 12, 15]) is None, "an item everyone scored alike separates no one"


def test_it_points_out_in_words_the_items_that_do_not_separate_and_those_everyone_passes_or_fails(report):
    assert len(ROSTER) >= SETTINGS.min_students, "the hand roster is large enough for the rubric to judge"
    found = {item.item: item.note for item in report.statistics.items}
    for item in report.statistics.items:
        if item.facility >= SETTINGS.everyone_passes:
            expected = itemstats.EVERYONE_PASSES
        elif item.facility <= SETTINGS.everyone_fails:
            expected = itemstats.EVERYONE_FAILS
        elif item.discrimination is None or item.discrimination < SETTINGS.low_discrimination:
            expected = itemstats.LOW
        else:
            expected = ""
        assert found[item.item] == expected, item.item
    assert (found[GR], found[T], found[M]) == (itemstats.EVERYONE_PASSES, itemstats.EVERYONE_FAILS, itemstats.LOW)
    assert itemstats.LOW == "this item does not separate students who know the week from those who do not"


def test_it_counts_each_named_mistake_once_per_student_on_each_todo_and_who_left_it_not_done(report):
    found = {todo.label.split(" · ")[0]: (todo.named, todo.not_done, todo.graded) for todo in report.statistics.todos}
    assert found == {
        NUMBERS["gather_final"]: ((("G1", 1), ("G2", 1)), 0, 5),
        NUMBERS["masked_mean"]: ((("G3", 1),), 1, 5),
        NUMBERS["next_token_loss"]: ((("S1", 2),), 0, 5),  # s1 was told S1 on two items: one student
    }


def test_it_points_nothing_out_below_the_rubrics_number_of_students(tmp_path):
    few = dict(list(ROSTER.items())[: SETTINGS.min_students - 1])
    stats = data.build(write_roster(tmp_path, few), SELECTED).statistics
    assert not stats.judged and stats.pointed_out == []
    assert all(item.facility is not None for item in stats.items), "the figures are still shown"


def test_the_page_and_the_job_summary_show_the_section(tmp_path):
    results = write_roster(tmp_path / "results", ROSTER)
    assert cli.main(["report", str(results), "--out", str(tmp_path / "out"), "--only", ",".join(ONLY)]) == 0
    page = (tmp_path / "out" / "report.html").read_text()
    assert 'id="item-statistics"' in page and 'id="item-statistics-table"' in page
    assert itemstats.LOW in page and "todo-mistakes-table" in page
    summary = (tmp_path / "out" / "misconceptions.md").read_text().split("## Items that tell you little")[1]
    rows = [line for line in summary.splitlines() if line.startswith("| ") and not line.startswith("| item")]
    little = {item.item for item in data.build(results, SELECTED).statistics.items if item.note}  # as the points fall
    everyone_passes = {GR} | {item.name for item in SELECTED.items if item.aspect == "legal_inputs"}
    assert {M, T} | everyone_passes <= little, "whatever the points: M separates backwards, T everyone fails"
    assert [row.split(" | ")[0][2:] for row in rows] == [item.name for item in SELECTED.items if item.name in little]


def test_untouched_stubs_are_not_done_on_a_threshold_item_not_crashed(tmp_path):
    stubs = {item.name: (Failure.NOT_DONE.value, []) for item in SELECTED.items}
    crashed = {T: (Failure.CRASH.value, [])}
    results = write_roster(tmp_path / "results", {"untouched": stubs, "crashed": crashed})
    (threshold,) = data.build(results, SELECTED).thresholds
    assert (threshold.not_done, threshold.without, dict(threshold.why)) == (["untouched"], ["crashed"], {"crashed": 1})
    assert cli.main(["report", str(results), "--out", str(tmp_path / "out"), "--only", ",".join(ONLY)]) == 0
    page = (tmp_path / "out" / "report.html").read_text()
    assert "1 not done (the TODO still raises NotImplementedError). 1 without an accuracy (crashed 1)." in page


@pytest.mark.parametrize("layout", ["empty", "one grading", "no results.json"])
def test_the_report_refuses_a_folder_with_no_gradings_saying_what_it_expects(tmp_path, capsys, layout):
    results = tmp_path / "results"
    results.mkdir()
    if layout == "one grading":
        writers.write_results_json(result({}), results / "results.json")
    if layout == "no results.json":
        (results / "notes").mkdir()
    assert cli.main(["report", str(results), "--out", str(tmp_path / "out")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "the report expects a folder with one subfolder per student, each holding its results.json" in line
    assert not (tmp_path / "out").exists()

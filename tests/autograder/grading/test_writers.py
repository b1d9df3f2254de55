"""The report writers: Gradescope's results.json, the Markdown summary, the terminal table."""

import json
import statistics
from collections import Counter
from pathlib import Path

import pytest
from gradescope_schema import validate

from autograder import rubric, stubs
from autograder.grading import writers
from autograder.grading.results import Failure, GradingResult, ItemResult
from autograder.grading.submission import LeftOut, Unlisted, Why


def sample(feedback: str = "output differs", output: str = "") -> GradingResult:
    items = [
        ItemResult("rnn_forward: output", "rnn_forward", "d", 6, 6, "passed"),
        ItemResult("gather_final: values", "gather_final", "d", 0, 6, "failed", feedback, output),
    ]
    return GradingResult(items, 1.5, {"torch_version": "2.13.0"}, [LeftOut("README.md", Why.NOT_GRADED)])


def test_it_writes_results_json_that_gradescope_accepts(tmp_path, reference_result, stub_result):
    for result in (sample(), reference_result, stub_result):
        writers.write_results_json(result, tmp_path / "results.json")
        document = json.loads((tmp_path / "results.json").read_text())
        validate(document)
        assert document["score"] == sum(test["score"] for test in document["tests"])


def test_it_names_every_test_after_the_function_it_grades(reference_result):
    functions = {todo.function.split(".")[0] for todo in stubs.todos()}
    for test in writers.gradescope(reference_result)["tests"]:
        assert test["name"].split(":")[0] in functions


def test_it_records_the_mistakes_named_and_the_numbers_measured_in_fields_gradescope_allows():
    result = sample(feedback="[G1] the state after the padding")
    result.items[1].mistakes, result.items[1].failure = ["G1"], "wrong"
    result.items[0].measured = {"accuracy": 0.93, "threshold": 0.8, "seeds": [0, 1, 2], "seed_accuracies": [0.9] * 3}
    document = writers.gradescope(result)
    validate(document)
    passed, failed = document["tests"]
    assert (passed["tags"], failed["tags"]) == ([], ["G1"])
    assert passed["extra_data"] == {"function": "rnn_forward", **result.items[0].measured}
    assert failed["extra_data"] == {"function": "gather_final", "failure": "wrong"}


def test_it_records_each_threshold_items_accuracies_whether_it_passed_or_not(reference_result, stub_result):
    graded = rubric.load()
    for test in writers.gradescope(reference_result)["tests"]:
        function, aspect = test["name"].split(": ")
        recipe = graded.recipe(function, aspect.replace(" ", "_"))
        extra = test["extra_data"]
        if recipe is None:
            assert "accuracy" not in extra, test["name"]
            continue
        assert extra["threshold"] == recipe.threshold and extra["seeds"] == list(recipe.seeds)
        assert len(extra["seed_accuracies"]) == len(recipe.seeds)
        trained = [value for value in extra["seed_accuracies"] if value is not None]  # null: seed not needed
        # the median of the rounded accuracies: of two seeds trained, their mean, rounded once more
        assert extra["accuracy"] == pytest.approx(statistics.median(trained), abs=1e-4)
        assert extra["accuracy"] >= recipe.threshold
    stubs_failures = {test["extra_data"].get("failure") for test in writers.gradescope(stub_result)["tests"]}
    assert stubs_failures == {"not done"}


def test_it_records_the_environment_of_the_grading(reference_result):
    extra = writers.gradescope(reference_result)["extra_data"]
    assert extra["max_score"] == rubric.load().total
    assert {"torch_version", "torch_threads", "seed", "grader_version"} <= set(extra)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[31mred\x1b[0m", "red"),
        ("::set-output name=score::100", ": :set-output name=score::100"),
        ("  ::stop-commands::token", ": :stop-commands::token"),
        ("nul\x00byte\x07", "nulbyte"),
        ("line\r\nbreak", "line\nbreak"),
    ],
)
def test_it_cleans_text_that_came_from_the_student(raw, shown):
    assert writers.clean(raw) == shown


def test_it_bounds_what_one_item_shows(tmp_path):
    result = sample(feedback="x" * 100_000, output="y" * 100_000)
    writers.write_results_json(result, tmp_path / "results.json")
    assert (tmp_path / "results.json").stat().st_size < 20_000
    assert "more characters" in writers.gradescope(result)["tests"][1]["output"]


def test_it_shows_a_table_with_the_total_and_one_line_per_item():
    lines = writers.table(sample()).splitlines()
    assert lines[2].split()[-4:] == ["output", "6", "6", "ok"]
    assert "gather_final: values" in lines[3] and lines[3].endswith("output differs")
    assert lines[-1].split() == ["total", "6", "12"]


def test_it_summarises_in_markdown_with_details_for_failed_items():
    text = writers.markdown(sample(feedback="[G1] first line\nsecond line"))
    assert "## Week 07 · Recurrent Networks: 6 / 12" in text
    assert "| gather_final: values | 0 | 6 | ❌ `[G1] first line` |" in text  # as code: it may quote the student
    assert "<details><summary>gather_final: values</summary>" in text and "second line" in text


def test_it_writes_results_json_whole_with_every_name_escaped_whatever_the_text(tmp_path):
    result = sample(feedback="raised ValueError: \udcff\ud800 lone surrogates")
    result.ignored = [LeftOut("notes-\udcff.txt", Why.NOT_GRADED), LeftOut("x\n::error::y.py", Why.LINK)]
    assert writers.write_all(result, tmp_path) == []
    document = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    validate(document)
    assert document["extra_data"]["ignored_files"] == ["notes-\\xff.txt", "x\\n::error::y.py"]
    assert document["extra_data"]["left_out"] == [
        {"path": "x\\n::error::y.py", "why": "link", "reason": LeftOut("", Why.LINK).reason()}
    ]
    assert "\\xff\\ud800 lone surrogates" in document["tests"][1]["output"]
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "`notes-\\xff.txt`" in summary and "- `x\\n::error::y.py`: it is a symbolic link" in summary


def test_it_still_writes_results_json_with_the_scores_when_a_report_cannot_be_written(tmp_path, capsys):
    result = sample()
    result.environment["unexpected"] = Path("a value JSON cannot hold")  # a grader bug
    (tmp_path / "summary.md").mkdir()  # and summary.md cannot be written at all
    problems = writers.write_all(result, tmp_path, str(tmp_path / "missing" / "step-summary.md"))
    assert [problem.split(":")[0] for problem in problems] == ["results.json in full", "summary.md", "the job summary"]
    document = json.loads((tmp_path / "results.json").read_text())
    validate(document)
    assert document["score"] == 6 and [test["score"] for test in document["tests"]] == [6, 0]
    assert "TypeError" in document["extra_data"]["report_error"]
    assert "could not write summary.md" in capsys.readouterr().err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["results.json", "summary.md"], (
        "no file left half-written"
    )


def untouched(selected: rubric.Rubric) -> GradingResult:
    """Every item of `selected` as untouched stubs leave it: not done."""
    items = [
        ItemResult(
            item.name, item.function, "", 0, item.points, "failed", "TODO is not done yet", failure=Failure.NOT_DONE
        )
        for item in selected.items
    ]
    return GradingResult(items, 1.0, unlisted=Unlisted(9, Counter({".venv": 1, ".git": 1})))


def test_it_summarises_untouched_stubs_in_one_line_per_todo_on_one_screen(stub_result):
    todos = stubs.todos()
    frame = writers.markdown(GradingResult([], 0.0)).splitlines()  # the title and the table's head
    for result in (untouched(rubric.load()), stub_result):
        lines = writers.markdown(result).splitlines()
        assert len(lines) <= len(frame) + len(todos) + len(writers.not_read_markdown(result))
        assert "What to fix" not in "\n".join(lines)
        for todo in todos:
            assert sum(line.startswith(f"| {todo.label} (") for line in lines) == 1, todo.label
        assert sum(writers.NOT_DONE in line for line in lines) == len(todos)


def test_it_keeps_the_details_of_a_todo_begun_beside_the_todos_not_done():
    result = untouched(rubric.load())
    begun = result.items[0]
    begun.failure, begun.feedback = Failure.WRONG, "[R1] the output differs"
    text = writers.markdown(result)
    assert f"<details><summary>{begun.name}</summary>" in text and text.count("<details>") == 1
    assert f"| {begun.name} | 0 |" in text


def test_it_counts_the_releases_files_and_the_tool_folders_in_one_line():
    result = untouched(rubric.load().select(["gather_final"]))
    lines = writers.markdown(result).splitlines()
    counted = [line for line in lines if "9 files of the release itself" in line]
    expected = "not read, as expected: 9 files of the release itself; tool folders, not looked into: {}, {}"
    assert counted == ["- " + expected.format("`.git`", "`.venv`")]  # as code: `__pycache__` is no bold text
    assert writers.table(result).splitlines()[-1] == expected.format(".git", ".venv")
    assert writers.gradescope(result)["extra_data"]["not_listed"] == {
        "release_files": 9,
        "tool_folders": {".git": 1, ".venv": 1},
    }


def test_the_terminal_shows_a_threshold_items_accuracy_and_threshold_before_any_cut():
    result = sample(feedback="An LSTM language model trained with your code " + "reached far too little " * 20)
    result.items[1].measured = {"accuracy": 0.04, "threshold": 0.8, "seeds": [0, 1, 2], "seed_accuracies": [0.04] * 3}
    line = writers.table(result).splitlines()[3]
    assert "accuracy 0.04 of 0.80 needed: An LSTM" in line and line.endswith("...")


def test_a_passing_items_note_is_shown_to_the_student_in_results_json_and_summary_md():
    """An item that passed only with another TODO's function stood in keeps its points and says so."""
    result = sample()
    result.items[0].note = "Your forward is right given a correct masked_mean; masked_mean (TODO 5): `<b>`"
    document = writers.gradescope(result)
    validate(document)
    shown = document["tests"][0]["output"]
    assert shown.startswith("Passed.\n") and "given a correct masked_mean" in shown
    assert document["tests"][0]["score"] == 6
    summary = writers.markdown(result)
    assert f"ok ({writers.NOTED})" in summary and "### Passed, with a note" in summary and "`<b>`" in summary
    assert writers.item_text(sample().items[0]) == "Passed."  # no note, as before

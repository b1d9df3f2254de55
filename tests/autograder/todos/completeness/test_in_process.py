"""`autograde todo check`, the judgements made in this process: the record and its TODO, the stubs, each item's
check, the rubric and the reference; a copy with a piece missing gets the line that names the piece."""

import dataclasses
import inspect
import shutil
from pathlib import Path

from autograder import rubric, todos
from autograder.locations import EXERCISES, ROOT, SOLUTIONS
from autograder.todos.completeness import Finding, Paths, Status, in_process, mistakes

LSTM = todos.record("lstm_step")


def missing(findings: list[Finding]) -> list[str]:
    return [finding.words for finding in findings if finding.status == Status.MISSING]


def home(key: str, aspect: str) -> str:
    """The file the check of `key: aspect` is in, as todos.check finds it, from the checkout's root."""
    return Path(inspect.getsourcefile(todos.check(key, aspect))).resolve().relative_to(ROOT.resolve()).as_posix()


# -- 1. the record, its TODO, the stubs ----------------------------------------------------------------------
def test_the_weeks_record_reads_with_its_todo_around_its_function():
    found = in_process.record_finding("lstm_step")
    assert found.status == Status.OK and "autograder/todos/lstm_step/record.toml reads" in found.words
    assert "sits in lstm_step, solutions/recurrence.py" in found.words


def test_a_record_without_its_module_is_missing_saying_which_key_it_needs(folders):
    record = folders / "lstm_step" / "record.toml"
    record.write_text(record.read_text().replace('module = "recurrence"\n', ""))
    found = in_process.record_finding("lstm_step", Paths(todos=folders))
    assert found.status == Status.MISSING and "lstm_step/record.toml: it needs `module`" in found.words


def test_a_record_whose_todo_markers_are_gone_is_missing_saying_no_todo_fills_its_function_in(folders, tmp_path):
    solutions = tmp_path / "solutions"
    shutil.copytree(SOLUTIONS, solutions, ignore=shutil.ignore_patterns("__pycache__"))
    source = solutions / "recurrence.py"
    lines = source.read_text().splitlines(keepends=True)
    function = next(index for index, line in enumerate(lines) if line.startswith("def lstm_step("))
    begin = next(index for index in range(function, len(lines)) if "### BEGIN SOLUTION" in lines[index])
    end = next(index for index in range(begin, len(lines)) if "### END SOLUTION" in lines[index])
    source.write_text("".join(line for index, line in enumerate(lines) if index not in (begin, end)))
    found = in_process.record_finding("lstm_step", Paths(todos=folders, solutions=solutions))
    assert found.status == Status.MISSING
    assert "lstm_step/record.toml: no TODO in solutions/recurrence.py fills in lstm_step" in found.words


def test_a_stub_that_is_not_what_solutions_generates_is_missing_with_the_command_that_writes_it(tmp_path):
    exercises = tmp_path / "exercises"
    shutil.copytree(EXERCISES, exercises, ignore=shutil.ignore_patterns("__pycache__", "tests"))
    assert in_process.stubs_finding(Paths(exercises=exercises)).status == Status.OK
    with (exercises / "recurrence.py").open("a") as stub:
        stub.write("# edited by hand\n")
    found = in_process.stubs_finding(Paths(exercises=exercises))
    assert found.status == Status.MISSING
    assert found.words == "exercises/recurrence.py: differs from the generated stub: run `autograde stubs`"


# -- 2. the checks and the rubric ----------------------------------------------------------------------------
def test_each_item_of_the_week_has_its_check_with_a_docstring():
    for found in todos.records():
        assert missing(in_process.check_findings(found)) == [], found.key


def test_an_item_without_its_check_is_missing_saying_what_to_write_where():
    found = dataclasses.replace(LSTM, points={**LSTM.points, "sings": 1})
    assert missing(in_process.check_findings(found)) == [
        f"item sings has no check: write check_lstm_step_sings in {home('lstm_step', 'values')}"
    ]


def test_a_threshold_item_without_its_check_is_to_be_written_where_the_other_threshold_checks_are():
    found = dataclasses.replace(LSTM, points={**LSTM.points, "sings": 1}, thresholds={"sings": {}})
    where = home("next_token_loss", "trains_the_pattern_model").replace("/next_token_loss/", "/lstm_step/")
    said = missing(in_process.check_findings(found))
    assert said == [f"item sings has no check: write check_lstm_step_sings in {where}"]


def test_a_check_without_a_docstring_is_missing_saying_what_its_first_line_says(monkeypatch):
    real = todos.check
    monkeypatch.setattr(
        todos, "check", lambda key, aspect: (lambda student: None) if aspect == "values" else real(key, aspect)
    )
    assert missing(in_process.check_findings(LSTM)) == [
        "check_lstm_step_values has no docstring: say in its first line what item values grades"
    ]


def test_a_rubric_that_does_not_load_is_missing_in_its_own_words_and_no_item_is_run():
    broken = rubric.RubricError("rubric.toml: the points add up to 99, not total = 100")
    assert in_process.rubric_finding(LSTM, broken).words == f"the rubric does not load: {broken}"
    assert missing(in_process.reference_findings(LSTM, broken)) == ["not run: the rubric does not load (above)"]


# -- 3. the reference ---------------------------------------------------------------------------------------
def test_the_reference_gets_every_item_of_an_exercise_run_here():
    assert [finding.status for finding in in_process.reference_findings(LSTM, rubric.load())] == [Status.OK]


def test_an_item_the_reference_loses_is_missing_with_its_feedback():
    wrong = mistakes.standing_in(LSTM, mistakes.table_of(LSTM)["L4"])  # the state unpacked (c, h)
    said = missing(in_process.reference_findings(LSTM, rubric.load(), student=wrong))
    assert len(said) == 1 and said[0].startswith("the reference loses item values: [L4] Your step unpacks c, h")
    assert said[0].endswith("(fix solutions/recurrence.py or check_lstm_step_values)")

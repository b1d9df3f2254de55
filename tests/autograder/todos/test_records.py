"""The exercises' records: one per TODO, read in the TODOs' order, and the rubric's points and recipes are theirs."""

import re
import shutil
from pathlib import Path

import pytest
from support import SOLUTIONS

from autograder import rubric, stubs, todos
from autograder.locations import TODOS


@pytest.fixture
def folders(tmp_path: Path) -> Path:
    """A copy of every exercise's folder, to break."""
    copy = tmp_path / "todos"
    shutil.copytree(TODOS, copy, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return copy


def test_it_reads_one_record_per_todo_in_the_todos_order():
    found = [(record.module, record.function) for record in todos.records()]
    assert found == [(todo.module, todo.function) for todo in stubs.todos()]


def test_it_finds_a_record_by_its_key_and_by_its_function():
    assert todos.record("SequenceClassifier").target == "classifier.SequenceClassifier.forward"
    assert todos.by_function()["SequenceClassifier.forward"].key == "SequenceClassifier"


def test_it_refuses_a_todo_without_a_record_naming_the_function(folders):
    shutil.rmtree(folders / "lstm_step")
    with pytest.raises(todos.RecordError, match=r"no record in .* for the TODO of lstm_step in recurrence.py"):
        todos.records(folders, SOLUTIONS)


def test_it_refuses_a_folder_named_otherwise_than_its_function(folders):
    (folders / "lstm_step").rename(folders / "lstm")
    with pytest.raises(todos.RecordError, match=r"lstm/record.toml: its folder must be named lstm_step"):
        todos.records(folders, SOLUTIONS)


def test_it_refuses_a_record_whose_function_no_todo_fills_in(folders):
    (folders / "no_such_step").mkdir()
    (folders / "no_such_step" / "record.toml").write_text(
        'module = "recurrence"\nfunction = "no_such_step"\n[items]\nv = 1\n[smoke]\ncode = "no_such_step"\n'
    )
    with pytest.raises(todos.RecordError, match=r"no_such_step/record.toml: no TODO in solutions/recurrence.py fills"):
        todos.records(folders, SOLUTIONS)


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda text: "colour = 1\n" + text, r"unknown key colour \(a record holds module, function"),
        (lambda text: re.sub(r"^values = \d+", 'values = "four"', text, flags=re.M), r"\[items\] values must be"),
        (lambda text: text.replace('module = "recurrence"\n', ""), r"it needs `module`"),
        (lambda text: text + "\n[thresholds.fast]\nthreshold = 0.5\n", r"\[thresholds.fast\] has no item in \[items\]"),
        (lambda text: text.replace("[smoke]", "[smoke]\nextra = 1").replace("code = '''", "cod = '''"), "`code`"),
        (lambda text: text.replace("[items]", "[items", 1), "cannot be read as a record"),
        (lambda text: text.replace("lesson = 'Day 2, \"What LSTM changed\"'", "", 1), r"\[mistakes.L2\] needs lesson"),
    ],
)
def test_it_refuses_a_broken_record_saying_which_file_and_what(folders, change, problem):
    path = folders / "lstm_step" / "record.toml"
    path.write_text(change(path.read_text()))
    with pytest.raises(todos.RecordError, match=rf"lstm_step/record.toml.*{problem}"):
        todos.records(folders, SOLUTIONS)


def test_a_record_that_is_not_toml_names_its_file_and_hints_at_triple_quotes_for_a_quote_in_a_string(folders):
    path = folders / "lstm_step" / "record.toml"
    path.write_text(path.read_text().replace("lesson = 'Day 2, \"What", "lesson = 'Day 2's \"What", 1))
    with pytest.raises(todos.RecordError) as raised:
        todos.records(folders, SOLUTIONS)
    assert str(raised.value).startswith(f"{path} cannot be read as a record: not valid TOML, ")
    assert "(at line 27, column 17)" in str(raised.value)  # the reader's own place, then the hint
    assert str(raised.value).endswith("one holding both ' and \" in triple quotes: '''...'''")


def test_a_record_that_is_not_toml_with_no_quote_before_where_it_stops_gets_no_hint(folders):
    path = folders / "lstm_step" / "record.toml"
    path.write_text(path.read_text().replace("[items]", "[items", 1))  # its comment's "item's" comes after
    with pytest.raises(todos.RecordError) as raised:
        todos.records(folders, SOLUTIONS)
    assert "cannot be read as a record: not valid TOML" in str(raised.value)
    assert "quote" not in str(raised.value)


def test_its_points_and_recipes_are_the_rubrics():
    loaded = rubric.load()
    assert {(i.function, i.aspect): i.points for i in loaded.items} == {
        (r.key, aspect): points for r in todos.records() for aspect, points in r.points.items()
    }
    assert {(r.function, r.aspect) for r in loaded.recipes} == {
        (r.key, aspect) for r in todos.records() for aspect in r.thresholds
    }


def test_the_rubric_text_a_grading_records_is_the_whole_rubric():
    loaded = rubric.load()
    again = rubric.loads(loaded.text, Path("recorded.toml"))
    assert again.items == loaded.items and again.recipes == loaded.recipes
    assert "[points.lstm_step]" in loaded.text and "[thresholds.SequenceClassifier.learns_the_task]" in loaded.text


def test_a_sections_rubric_keeps_its_own_points_and_takes_the_tables_it_leaves_out_from_the_records(tmp_path):
    grader = rubric.load()
    lowered = re.sub(r"^values = (\d+)", lambda m: f"values = {int(m[1]) - 1}", grader.text, count=1, flags=re.M)
    own = re.sub(r"^total = \d+", f"total = {grader.total - 1:g}", lowered, count=1, flags=re.M)
    (tmp_path / "own.toml").write_text(own)
    assert rubric.load(tmp_path / "own.toml").total == grader.total - 1
    (tmp_path / "late.toml").write_text('total = 100\n[late]\nper_day = 0.1\nmax_days = 2\nkeep = "latest"\n')
    section = rubric.load(tmp_path / "late.toml")
    assert section.items == rubric.load().items and section.late is not None

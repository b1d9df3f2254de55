"""The rubric file is the single list of items: suites, checks and points agree with it."""

import importlib.util
import subprocess
import sys
import tomllib
from datetime import timedelta

import pytest
from support import ROOT, rubric_file

from autograder import cli, rubric, stubs, todos
from autograder.locations import SUITES


def suite_tests() -> set[tuple[str, str]]:
    """(file stem, test name) of every test the hidden suite holds, as pytest names them."""
    spec = importlib.util.spec_from_file_location("hidden_suite", SUITES / "test_items.py")
    suite = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(suite)
    return {("test_items", f"test_item[{item}]") for item in suite.ITEMS}


def test_it_adds_up_to_100_points():
    assert rubric.load().total == 100


def test_it_has_a_hidden_test_for_every_item_and_an_item_for_every_test():
    items = {item.test_id for item in rubric.load().items}
    assert items == suite_tests()


def test_it_has_a_check_with_a_docstring_for_every_item():
    for item in rubric.load().items:
        check = todos.check(item.function, item.aspect)
        assert check.__doc__, f"{check.__name__} needs a docstring: it is the item's description"


def test_it_grades_every_todo_of_the_week():
    graded = set(rubric.load().functions)
    assert {todo.function.split(".")[0] for todo in stubs.todos()} == graded


def test_it_keeps_the_items_of_the_functions_named_by_only():
    selected = rubric.load().select(["gather_final", "sample"])
    assert {item.function for item in selected.items} == {"gather_final", "sample"}
    points = rubric.load().items
    assert selected.total == sum(item.points for item in points if item.function in {"gather_final", "sample"})


def test_it_refuses_an_unknown_name_in_only_or_in_a_rubric_file_and_lists_the_known_ones(tmp_path):
    with pytest.raises(ValueError, match="no rubric items for gather_finale; known: rnn_forward"):
        rubric.load().select(["gather_finale"])
    text = rubric.load().text
    (tmp_path / "limit.toml").write_text(text.replace("call_timeout =", "call_timeuot ="))
    with pytest.raises(rubric.RubricError, match=r"limit.toml: unknown limit call_timeuot \(the limits are call_"):
        rubric.load(tmp_path / "limit.toml")
    (tmp_path / "section.toml").write_text(text + "\n[lates]\nper_day = 0.1\n")
    with pytest.raises(rubric.RubricError, match=r"unknown section \[lates\] \(a rubric holds points, thresholds"):
        rubric.load(tmp_path / "section.toml")


POLICIES = '[late]\nper_day = 0.10\nmax_days = 3\nkeep = "better"\n\n[credit]\nR1 = 0.5\nG1 = 0.25\n'


def test_it_reads_the_courses_policies_into_typed_records(tmp_path):
    path = rubric_file(tmp_path / "section.toml", POLICIES)
    policies = tomllib.loads(POLICIES)
    read = rubric.load(path)
    assert read.late == rubric.Late(**policies["late"])
    assert read.credit == rubric.Credit(policies["credit"])
    assert read.items == rubric.load().items, "the rest of the file is read as before"


def test_it_has_no_policy_without_their_sections_as_the_graders_own_rubric():
    assert rubric.load().late is None and rubric.load().credit == rubric.Credit()
    assert rubric.Credit().applies("wrong", ["R1"]) is None


def test_its_late_policy_counts_a_part_of_a_day_as_a_day_and_never_takes_more_than_the_score(tmp_path):
    late = rubric.load(rubric_file(tmp_path / "section.toml", POLICIES)).late
    assert [late.days_late(timedelta(hours=hours)) for hours in (-5, 0, 1, 24, 36, 96)] == [0, 0, 1, 1, 2, 4]
    assert late.penalty(60.0, 2) == round(60.0 * 2 * late.per_day, 2)
    assert late.penalty(60.0, 1000) == 60.0


def test_its_credit_applies_only_to_a_wrong_answer_naming_exactly_that_mistake(tmp_path):
    credit = rubric.load(rubric_file(tmp_path / "section.toml", POLICIES)).credit
    assert credit.applies("wrong", ["R1"]) == ("R1", credit.fractions["R1"])
    assert credit.applies("wrong", []) is None, "a mistake the grader cannot name earns nothing"
    assert credit.applies("wrong", ["R1", "R3"]) is None, "nor two mistakes at once"
    assert credit.applies("wrong", ["R3"]) is None, "nor a mistake the rubric gives nothing for"
    assert credit.applies("timeout", ["R1"]) is None and credit.applies("raised", ["R1"]) is None


BAD_POLICIES = [
    ("[credit]\nR9 = 0.5\n", r"\[credit\] names R9, which is not a catalogue id \(they are R1, R2"),
    ("[credit]\nR1 = 1.5\n", r"credit.R1 must be a fraction from 0 to 1, not 1.5"),
    ("[credit]\nR1 = -0.5\n", r"credit.R1 must be a fraction from 0 to 1, not -0.5"),
    ('[credit]\nR1 = "half"\n', r"credit.R1 must be a fraction from 0 to 1, not 'half'"),
    ("credit = 0.5\n", r"\[credit\] must be a table"),
    ("[late]\nper_day = 0.1\nmax_days = -1\n", r"late.max_days must be a whole number of days, at least 0, not -1"),
    ("[late]\nper_day = 0.1\nmax_days = 1.5\n", r"late.max_days must be a whole number of days, at least 0, not 1.5"),
    ("[late]\nper_day = 1.1\nmax_days = 3\n", r"late.per_day must be a fraction from 0 to 1, not 1.1"),
    ("[late]\nper_day = -0.1\nmax_days = 3\n", r"late.per_day must be a fraction from 0 to 1, not -0.1"),
    (
        '[late]\nper_day = 0.1\nmax_days = 3\nkeep = "best"\n',
        r"late.keep must be one of 'latest', 'better', not 'best'",
    ),
    ("[late]\nper_day = 0.1\n", r"\[late\] lacks max_days"),
    ("[late]\nper_day = 0.1\nmax_days = 3\nmax_day = 4\n", r"unknown setting late.max_day \(the settings are per_day"),
    ("late = 3\n", r"\[late\] must be a table"),
]


@pytest.mark.parametrize(("sections", "problem"), BAD_POLICIES)
def test_it_refuses_a_policy_it_cannot_apply_saying_what_is_wrong(tmp_path, sections, problem):
    path = rubric_file(tmp_path / "bad.toml", sections) if sections.startswith("[") else tmp_path / "bad.toml"
    if not sections.startswith("["):  # a key at the top of the file, before any table
        path.write_text(sections + rubric.load().text)
    with pytest.raises(rubric.RubricError, match=f"bad.toml: {problem}"):
        rubric.load(path)


def test_it_checks_a_rubric_file_against_the_hidden_suites_as_it_reads_it(tmp_path):
    text = rubric.load().text
    (tmp_path / "extra.toml").write_text(text.replace("writes_the_loop = 1", "writes_the_loop = 1\nloops_twice = 1"))
    with pytest.raises(rubric.RubricError, match=r"points.rnn_forward.loops_twice has no hidden test"):
        rubric.load(tmp_path / "extra.toml")
    (tmp_path / "missing.toml").write_text(text.replace("writes_the_loop = 1\n", ""))
    with pytest.raises(rubric.RubricError, match=r"\[points.rnn_forward\] lacks writes_the_loop: every hidden test"):
        rubric.load(tmp_path / "missing.toml")
    (tmp_path / "function.toml").write_text(text + "\n[points.rnn_backward]\nvalues = 1\n")
    with pytest.raises(rubric.RubricError, match=r"no hidden suite grades rnn_backward"):
        rubric.load(tmp_path / "function.toml")


TYPOS = [
    (
        "threshold = 0.7",
        "threshold = 7.0",
        r"thresholds.SequenceClassifier.learns_the_task.threshold must be an accuracy",
    ),
    (
        "threshold = 0.9",
        "threshold = 0",
        r"thresholds.SequenceClassifier.learns_padded_rows.threshold must be an accuracy",
    ),
    (
        "threshold = 0.8",
        "threshold = -0.8",
        r"thresholds.next_token_loss.trains_the_pattern_model.threshold must be an",
    ),
    ("lesson = 0.996", "lesson = 99.6", r"thresholds.SequenceClassifier.learns_the_task.lesson must be an accuracy"),
    (
        "seeds_decided_early = true",
        'seeds_decided_early = "yes"',
        r"thresholds.next_token_loss.trains_the_pattern_model.seeds_decided_early must be true or false, not 'yes'",
    ),
    ("output = 4\n", "output = 40\n", r"the points add up to \d+, not total = \d+: an item's points or the total"),
    ("total = 100 ", "total = 90 ", r"the points add up to \d+, not total = 90"),
    ("total = 100 ", "total = 0 ", r"total must be a number above 0, not 0"),
    ("total = 100 ", 'total = "100" ', r"total must be a number above 0, not '100'"),
    ("total = 100 ", "# total = 100 ", r"total is missing: state the points the items add up to"),
    ("total = 100 ", "totl = 100 ", r"unknown setting totl \(the top of a rubric sets only total\)"),
]


@pytest.mark.parametrize(("line", "typo", "problem"), TYPOS)
def test_it_refuses_a_typo_in_a_threshold_or_in_the_points_naming_the_key(tmp_path, line, typo, problem):
    text = rubric.load().text
    assert line in text, "the typo is made in a line the rubric has"
    (tmp_path / "typo.toml").write_text(text.replace(line, typo, 1))
    with pytest.raises(rubric.RubricError, match=f"typo.toml: {problem}"):
        rubric.load(tmp_path / "typo.toml")


def test_it_states_its_total_and_its_points_add_up_to_it():
    stated = tomllib.loads(rubric.load().text)["total"]
    assert rubric.load().total == stated


def test_it_accepts_a_course_sections_own_points_when_they_add_up_to_its_total(tmp_path):
    path = rubric_file(tmp_path / "section.toml", points=lambda function, aspect: 0.5)
    read = rubric.load(path)
    assert read.total == tomllib.loads(path.read_text())["total"] == 0.5 * len(read.items)


def run_module(*arguments: str) -> subprocess.CompletedProcess:
    """`python -m autograder.rubric` as the roster workflow's first job runs it: the standard library only."""
    command = [sys.executable, "-S", "-m", "autograder.rubric", *arguments]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_its_module_says_what_a_rubric_file_sets_or_why_it_cannot_be_used(tmp_path):
    path = rubric_file(tmp_path / "section.toml", POLICIES)
    late = rubric.load(path).late
    done = run_module(str(path))
    assert done.returncode == 0, done.stderr
    assert f"late work: {rubric.percent(late.per_day)} of the score per day late" in done.stdout
    assert "credit by named mistake: R1 keeps 50%, G1 keeps 25%" in done.stdout
    assert "late work: none" in run_module().stdout
    bad = rubric_file(tmp_path / "bad.toml", "[credit]\nR9 = 0.5\n")
    done = run_module(str(bad))
    assert done.returncode == 2 and done.stdout == "" and len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith(f"rubric: {bad}: [credit] names R9")


def test_its_command_says_what_its_module_says_of_a_rubric_file_good_or_bad(tmp_path, capsys):
    path = rubric_file(tmp_path / "section.toml", POLICIES)
    assert cli.main(["rubric", "check", str(path)]) == 0
    said = capsys.readouterr().out
    assert said == run_module(str(path)).stdout and said.startswith(f"{path}: OK, ")
    bad = rubric_file(tmp_path / "bad.toml", "[credit]\nR9 = 0.5\n")
    assert cli.main(["rubric", "check", str(bad)]) == run_module(str(bad)).returncode == 2
    assert capsys.readouterr().err.removeprefix("autograde: ") == run_module(str(bad)).stderr.removeprefix("rubric: ")


def test_its_module_reports_the_total_and_refuses_points_that_do_not_add_up_in_one_line(tmp_path):
    stated = tomllib.loads(rubric.load().text)["total"]
    assert f"{len(rubric.load().items)} items, {stated:g} points" in run_module().stdout
    typo = tmp_path / "typo.toml"
    typo.write_text(rubric.load().text.replace("output = 4\n", "output = 40\n", 1))
    done = run_module(str(typo))
    assert done.returncode == 2 and done.stdout == "" and len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith(f"rubric: {typo}: the points add up to {stated + 36:g}, not total = {stated:g}")


def test_it_reads_when_the_class_report_points_an_item_out_from_its_report_table():
    table = tomllib.loads(rubric.load().text)["report"]
    assert rubric.load().report == rubric.Report(**table)


@pytest.mark.parametrize(
    ("line", "typo", "problem"),
    [
        ("everyone_passes = 0.95", "everyone_passes = 95", r"report.everyone_passes must be a fraction from 0 to 1"),
        ("low_discrimination = 0.2", 'low_discrimination = "low"', r"report.low_discrimination must be a fraction"),
        ("min_students = 5", "min_students = 1", r"report.min_students must be a whole number of at least 2, not 1"),
        ("min_students = 5", "min_student = 5", r"unknown setting report.min_student \(the settings are"),
    ],
)
def test_it_refuses_a_report_setting_it_cannot_use_naming_the_key(tmp_path, line, typo, problem):
    text = rubric.load().text
    assert line in text
    (tmp_path / "bad.toml").write_text(text.replace(line, typo))
    with pytest.raises(rubric.RubricError, match=f"bad.toml: {problem}"):
        rubric.load(tmp_path / "bad.toml")

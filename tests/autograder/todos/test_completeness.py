"""`autograde todo check`: each requirement of a complete exercise holds for the week's, and a copy with a piece
missing (a record, a TODO, a stub, a check, a variant, a public test) gets the line that names the piece."""

import dataclasses
import re
import shutil
from pathlib import Path

import pytest

from autograder import cli, commands, rubric, todos
from autograder.checks.variants import Table
from autograder.locations import EXERCISES, PUBLIC_TESTS, REFERENCE_TESTS, SOLUTIONS, TODOS
from autograder.todos import completeness
from autograder.todos.completeness import Completeness, Finding, Outcome, Paths, Requirement, Status

LSTM = todos.record("lstm_step")
LSTM_TABLE = completeness.table_of(LSTM)  # its variants, as the checkout holds them


@pytest.fixture
def folders(tmp_path: Path) -> Path:
    """A copy of every exercise's record, to break."""
    copy = tmp_path / "todos"
    shutil.copytree(TODOS, copy, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return copy


def missing(findings: list[Finding]) -> list[str]:
    return [finding.words for finding in findings if finding.status == Status.MISSING]


def lstm_table(**options: dict) -> Table:
    """lstm_step's variants with `options` in place of its own (an option of {} makes no mistake)."""
    return Table(LSTM_TABLE.implementation, options)


# -- 1. the record, its TODO, the stubs ----------------------------------------------------------------------
def test_the_weeks_record_reads_with_its_todo_around_its_function():
    found = completeness.record_finding("lstm_step")
    assert found.status == Status.OK and "autograder/todos/lstm_step/record.toml reads" in found.words
    assert "sits in lstm_step, solutions/recurrence.py" in found.words


def test_a_record_without_its_module_is_missing_saying_which_key_it_needs(folders):
    record = folders / "lstm_step" / "record.toml"
    record.write_text(record.read_text().replace('module = "recurrence"\n', ""))
    found = completeness.record_finding("lstm_step", Paths(todos=folders))
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
    found = completeness.record_finding("lstm_step", Paths(todos=folders, solutions=solutions))
    assert found.status == Status.MISSING
    assert "lstm_step/record.toml: no TODO in solutions/recurrence.py fills in lstm_step" in found.words


def test_when_the_records_do_not_read_each_exercise_says_why_and_nothing_else_is_checked(folders):
    (folders / "lstm_step" / "record.toml").write_text("module = \n")
    found = list(completeness.check(["rnn_forward", "lstm_step"], Paths(todos=folders)))
    assert [exercise.key for exercise in found] == ["rnn_forward", "lstm_step"]
    for exercise in found:
        assert [finding.requirement for finding in exercise.findings] == [Requirement.RECORD]
        assert not exercise.complete and "lstm_step/record.toml cannot be read" in exercise.findings[0].words


def test_a_stub_that_is_not_what_solutions_generates_is_missing_with_the_command_that_writes_it(tmp_path):
    exercises = tmp_path / "exercises"
    shutil.copytree(EXERCISES, exercises, ignore=shutil.ignore_patterns("__pycache__", "tests"))
    assert completeness.stubs_finding(Paths(exercises=exercises)).status == Status.OK
    with (exercises / "recurrence.py").open("a") as stub:
        stub.write("# edited by hand\n")
    found = completeness.stubs_finding(Paths(exercises=exercises))
    assert found.status == Status.MISSING
    assert found.words == "exercises/recurrence.py: differs from the generated stub: run `autograde stubs`"


# -- 2. the checks and the rubric ----------------------------------------------------------------------------
def test_each_item_of_the_week_has_its_check_with_a_docstring():
    for found in todos.records():
        assert missing(completeness.check_findings(found)) == [], found.key


def test_an_item_without_its_check_is_missing_saying_what_to_write_where():
    found = dataclasses.replace(LSTM, points={**LSTM.points, "sings": 1})
    assert missing(completeness.check_findings(found)) == [
        "item sings has no check: write check_lstm_step_sings in autograder/checks/recurrence.py"
    ]


def test_a_check_without_a_docstring_is_missing_saying_what_its_first_line_says(monkeypatch):
    real = todos.check
    monkeypatch.setattr(
        todos, "check", lambda key, aspect: (lambda student: None) if aspect == "values" else real(key, aspect)
    )
    assert missing(completeness.check_findings(LSTM)) == [
        "check_lstm_step_values has no docstring: say in its first line what item values grades"
    ]


def test_a_rubric_that_does_not_load_is_missing_in_its_own_words_and_no_item_is_run():
    broken = rubric.RubricError("rubric.toml: the points add up to 99, not total = 100")
    assert completeness.rubric_finding(LSTM, broken).words == f"the rubric does not load: {broken}"
    assert missing(completeness.reference_findings(LSTM, broken)) == ["not run: the rubric does not load (above)"]


# -- 3. the reference ---------------------------------------------------------------------------------------
def test_the_reference_gets_every_item_of_an_exercise_run_here():
    assert [finding.status for finding in completeness.reference_findings(LSTM, rubric.load())] == [Status.OK]


def test_an_item_the_reference_loses_is_missing_with_its_feedback():
    wrong = completeness.standing_in(LSTM, completeness.table_of(LSTM)["L4"])  # the state unpacked (c, h)
    said = missing(completeness.reference_findings(LSTM, rubric.load(), student=wrong))
    assert len(said) == 1 and said[0].startswith("the reference loses item values: [L4] Your step unpacks c, h")
    assert said[0].endswith("(fix solutions/recurrence.py or check_lstm_step_values)")


def test_the_projects_tests_that_call_a_function_are_found_through_the_helpers_and_fixtures_of_their_file(tmp_path):
    (tmp_path / "test_recurrence.py").write_text(
        "import pytest\nfrom solutions import recurrence\n"
        "def both(): return recurrence.lstm_step(1, 2)\n"
        "@pytest.fixture\ndef stepped(): return both()\n"
        "def test_directly(): recurrence.lstm_step()\n"
        "def test_through_a_helper(): both()\n"
        "def test_through_a_fixture(stepped): pass\n"
        "def test_another_function(): recurrence.rnn_forward()\n"
    )
    assert completeness.reference_callers(LSTM, tmp_path) == [
        "test_recurrence::test_directly",
        "test_recurrence::test_through_a_helper",
        "test_recurrence::test_through_a_fixture",
    ]


def test_the_projects_comparison_of_rnn_forward_with_nn_rnn_is_among_its_callers():
    callers = completeness.reference_callers(todos.record("rnn_forward"), REFERENCE_TESTS)
    assert "test_recurrence::test_rnn_forward_matches_nn_rnn_outputs_and_final_state" in callers
    assert not any("lstm_step" in test for test in callers)


@pytest.mark.slow  # a pytest run of the checkout's tests/solutions: a few seconds
def test_the_projects_tests_that_call_lstm_step_run_from_the_checkout_and_pass():
    callers, ran = completeness.run_reference_tests([LSTM])
    assert callers["lstm_step"] and {case.function for case in ran} == set(callers["lstm_step"])
    assert completeness.pytorch_findings(LSTM, callers, ran)[0].status == Status.OK


def test_no_test_comparing_it_with_pytorch_is_a_note_not_something_missing():
    found = completeness.pytorch_findings(LSTM, {}, [])
    assert [(f.status, f.words) for f in found] == [
        (Status.NOTE, "no test compares it with PyTorch: none in tests/solutions/")
    ]


def test_a_failing_comparison_with_pytorch_is_missing_naming_the_case_and_its_message():
    test = "test_recurrence::test_lstm_step_matches_nn_lstmcell"
    ran = [Outcome(f"{test}[2-3]", True), Outcome(f"{test}[1-1]", False, "AssertionError: h differs")]
    assert missing(completeness.pytorch_findings(LSTM, {"lstm_step": [test]}, ran)) == [
        f"{test}[1-1] fails: AssertionError: h differs"
    ]


# -- 4. the mistakes ----------------------------------------------------------------------------------------
def test_each_variant_of_lstm_step_loses_an_item_that_names_its_mistake():
    found = completeness.mistake_findings(LSTM, rubric.load())
    assert [finding.status for finding in found] == [Status.OK] and "(L1, L2, L3, L4)" in found[0].words


def test_a_catalogued_mistake_without_a_variant_is_missing_saying_where_to_add_it(monkeypatch):
    table = LSTM_TABLE
    kept = {key: options for key, options in table.options.items() if not key.startswith("L4")}
    monkeypatch.setattr(completeness, "table_of", lambda found: lstm_table(**kept))
    said = missing(completeness.mistake_findings(LSTM, rubric.load()))
    assert len(said) == 1 and re.fullmatch(r"mistake L4 has no variant: add it to \S+\.py's table", said[0]), said


def test_a_variant_that_makes_no_mistake_is_missing_saying_no_item_tells_it_apart(monkeypatch):
    table = LSTM_TABLE
    monkeypatch.setattr(completeness, "table_of", lambda found: lstm_table(**{**table.options, "L4": {}}))
    assert missing(completeness.mistake_findings(LSTM, rubric.load())) == [
        "variant L4 loses no item: the checks cannot tell it from the reference (fix it, or add an item)"
    ]


def test_a_variant_whose_mistake_the_catalogue_does_not_give_the_function_is_missing(monkeypatch):
    table = LSTM_TABLE
    monkeypatch.setattr(completeness, "table_of", lambda found: lstm_table(**table.options, **{"G1": {}}))
    said = missing(completeness.mistake_findings(LSTM, rubric.load()))
    assert said[0].startswith("variant G1 is of G1, a mistake the catalogue does not give lstm_step")


# -- 5. the public tests ------------------------------------------------------------------------------------
def test_an_exercise_without_public_tests_is_missing_saying_where_to_add_them():
    assert missing(completeness.public_findings(LSTM, {}, [], [])) == [
        "no public test calls lstm_step: add one to exercises/tests/test_recurrence.py, under its TODO's header "
        "('# ---- TODO <number> · lstm_step')"
    ]


def test_the_public_tests_of_an_exercise_are_those_under_its_todos_header():
    tests = completeness.public_callers([LSTM])["lstm_step"]
    assert tests and all(test.startswith("test_recurrence::") for test in tests)
    assert not set(tests) & set(completeness.public_callers([todos.record("rnn_forward")])["rnn_forward"])


@pytest.mark.release  # runs the public tests, twice: about ten seconds
def test_a_public_test_that_passes_on_the_stub_is_missing_naming_it(tmp_path):
    tests = tmp_path / "tests"
    shutil.copytree(PUBLIC_TESTS, tests, ignore=shutil.ignore_patterns("__pycache__", "*.json"))
    with (tests / "test_recurrence.py").open("a") as module:  # the file's last section is TODO 2's
        module.write("\n\ndef test_it_asserts_nothing():\n    assert True\n")
    ran = completeness.run_public_tests([LSTM], Paths(public_tests=tests))
    assert missing(completeness.public_findings(LSTM, *ran)) == [
        "public test test_recurrence::test_it_asserts_nothing passes on the stub: it shows nothing of lstm_step "
        "(make it call it and check what it gives)"
    ]


def test_a_public_test_that_fails_on_the_reference_is_missing_with_its_message():
    test = "test_recurrence::test_lstm_step_shapes"
    said = missing(completeness.public_findings(LSTM, {"lstm_step": [test]}, [Outcome(test, False, "boom")], []))
    assert said == [f"public test {test} fails on the reference: boom (fix the test, or solutions/recurrence.py)"]


def test_each_mistake_no_public_test_fails_with_is_missing_saying_where_to_add_a_test():
    said = missing(completeness.named_findings(LSTM, {}))
    assert [words.split(":")[0] for words in said] == [
        f"no public test fails with {m}" for m in ("L1", "L2", "L3", "L4")
    ]
    assert "add one to exercises/tests/test_recurrence.py, under lstm_step's header" in said[0]


def test_a_mistake_named_by_a_failing_public_test_is_no_longer_missing():
    call = {"inputs": [[[2], 0.5, 1.0]], "returned": {"shape": [2], "values": [1.0, 2.0]}}
    wrong = {**call, "returned": {"shape": [2], "values": [1.0, 3.0]}}
    record = {
        "function": LSTM.target,
        "in_place": False,
        "reference": {"failed": False, "calls": [call]},
        "variants": {"L4": {"failed": True, "calls": [wrong]}},
    }
    said = missing(completeness.named_findings(LSTM, {"test_recurrence::test_the_state_is_h_then_c": record}))
    assert [words.split(":")[0] for words in said] == [f"no public test fails with {m}" for m in ("L1", "L2", "L3")]


def test_an_outcome_of_a_junit_report_names_its_case_and_the_first_line_of_its_failure(tmp_path):
    report = tmp_path / "junit.xml"
    report.write_text(
        '<testsuites><testsuite><testcase classname="exercises.tests.test_recurrence" name="test_a[1]"/>'
        '<testcase classname="exercises.tests.test_recurrence" name="test_b">'
        '<failure message="AssertionError: [L4] Your step unpacks c, h&#10;  Reread: Day 2">...</failure>'
        "</testcase></testsuite></testsuites>"
    )
    assert completeness.outcomes(report) == [
        Outcome("test_recurrence::test_a[1]", True),
        Outcome("test_recurrence::test_b", False, "AssertionError: [L4] Your step unpacks c, h"),
    ]


# -- the command ---------------------------------------------------------------------------------------------
def test_its_command_refuses_a_key_the_week_has_no_exercise_for_checking_nothing(capsys):
    assert cli.main(["todo", "check", "lstm_step", "no_step"]) == commands.EXIT_ERROR
    printed = capsys.readouterr()
    assert printed.err.startswith("autograde: no exercise no_step in autograder/todos/: the week's are rnn_forward")
    assert printed.out == ""


def test_its_command_prints_a_line_per_requirement_and_exits_1_when_one_is_missing(monkeypatch, capsys):
    found = [
        Completeness(
            "lstm_step",
            "TODO 2 · LSTM step, recurrence.lstm_step",
            (
                Finding(Requirement.RECORD, Status.OK, "it reads"),
                Finding(Requirement.MISTAKES, Status.MISSING, "mistake L4 has no variant: add it"),
            ),
        ),
        Completeness("fit_baseline", "", (Finding(Requirement.PYTORCH, Status.NOTE, "no test compares it"),)),
    ]
    monkeypatch.setattr(completeness, "check", lambda keys: iter(found))
    assert cli.main(["todo", "check"]) == commands.EXIT_BELOW
    lines = capsys.readouterr().out.splitlines()
    assert lines[:5] == [
        "lstm_step (TODO 2 · LSTM step, recurrence.lstm_step)",
        "  ok       record: it reads",
        "  missing  mistakes: mistake L4 has no variant: add it",
        "fit_baseline",
        "  note     pytorch: no test compares it",
    ]
    assert lines[5].startswith("1 of 2 exercises complete; something missing in lstm_step, checked in ")


def test_its_command_exits_0_when_every_exercise_asked_about_is_complete(monkeypatch, capsys):
    complete = Completeness("fit_baseline", "", (Finding(Requirement.PYTORCH, Status.NOTE, "no test compares it"),))
    monkeypatch.setattr(completeness, "check", lambda keys: iter([complete]))
    assert cli.main(["todo", "check", "fit_baseline"]) == commands.EXIT_OK
    assert "1 of 1 exercise complete, checked in " in capsys.readouterr().out

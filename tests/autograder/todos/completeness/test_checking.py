"""`autograde todo check`: which exercises it checks, each one's findings in order, and the command printing them."""

from autograder import cli, commands
from autograder.todos import completeness
from autograder.todos.completeness import Completeness, Finding, Paths, Requirement, Status


def test_when_the_records_do_not_read_each_exercise_says_why_and_nothing_else_is_checked(folders):
    (folders / "lstm_step" / "record.toml").write_text("module = \n")
    found = list(completeness.check(["rnn_forward", "lstm_step"], Paths(todos=folders)))
    assert [exercise.key for exercise in found] == ["rnn_forward", "lstm_step"]
    for exercise in found:
        assert [finding.requirement for finding in exercise.findings] == [Requirement.RECORD]
        assert not exercise.complete and "lstm_step/record.toml cannot be read" in exercise.findings[0].words


# -- the command ---------------------------------------------------------------------------------------------
def test_its_command_says_which_record_is_not_toml_and_how_to_quote_a_string(folders, monkeypatch, capsys):
    path = folders / "lstm_step" / "record.toml"
    path.write_text(path.read_text().replace("lesson = 'Day 2, \"What", "lesson = 'Day 2's \"What", 1))
    monkeypatch.setattr(completeness, "known", lambda: completeness.checking.known(Paths(todos=folders)))
    monkeypatch.setattr(completeness, "check", lambda keys: completeness.checking.check(keys, Paths(todos=folders)))
    assert cli.main(["todo", "check", "lstm_step"]) == commands.EXIT_BELOW
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith(f"  missing  record: {path} cannot be read as a record: not valid TOML, ")
    assert "one holding both ' and \" in triple quotes: '''...'''" in lines[1]


def test_its_command_refuses_a_key_the_week_has_no_exercise_for_checking_nothing(capsys):
    assert cli.main(["todo", "check", "lstm_step", "no_step"]) == commands.EXIT_ERROR
    printed = capsys.readouterr()
    assert printed.err.startswith("autograde: no exercise no_step in autograder/todos/: the week's are rnn_forward")
    assert "autograder/todos/<key>/record.toml" in printed.err  # what a new one needs first
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

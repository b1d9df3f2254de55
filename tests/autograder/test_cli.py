"""`autograde grade` as a grader runs it: exit status, files written, the job summary."""

import argparse
import json
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import hostile
import pytest
from support import EXERCISES, ROOT, rubric_file

from autograder import TITLE, __version__, cli, commands, rubric, stubs, todos
from autograder.grading import writers
from autograder.locations import RUBRIC
from autograder.roster import shards


def points(function: str) -> float:
    return rubric.load().select([function]).total


LABELS = {todo.function: todo.label for todo in stubs.todos()}  # "TODO 4 · gather-at-final-index", as numbered


@pytest.mark.gradings
def test_it_writes_results_and_exits_0_whatever_the_score(submission, tmp_path, capsys):
    out = tmp_path / "out"
    code = cli.main(["grade", str(submission(base=EXERCISES)), "--out", str(out), "--only", "gather_final"])
    assert code == 0
    assert json.loads((out / "results.json").read_text())["score"] == 0
    assert (out / "summary.md").read_text().startswith("## Week 07")
    (row,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith(LABELS["gather_final"])]
    assert row.endswith(writers.NOT_DONE), "a TODO not done: one line, saying so"


@pytest.mark.gradings
def test_it_exits_1_below_fail_under(submission, tmp_path):
    full = points("gather_final")
    arguments = ["grade", str(submission()), "--out", str(tmp_path), "--only", "gather_final"]
    assert cli.main([*arguments, "--fail-under", str(full + 1)]) == 1
    assert json.loads((tmp_path / "results.json").read_text())["score"] == full
    assert cli.main([*arguments, "--fail-under", str(full)]) == 0


@pytest.mark.gradings
def test_it_appends_the_summary_to_the_github_job_summary(submission, tmp_path, monkeypatch):
    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    cli.main(["grade", str(submission()), "--out", str(tmp_path / "out"), "--only", "masked_mean"])
    text = summary.read_text()
    total = f"{points('masked_mean'):g}"
    values = next(f"{item.points:g}" for item in rubric.load().items if item.name == "masked_mean: values")
    assert text.startswith("earlier step\n") and f"Recurrent Networks: {total} / {total}" in text
    assert f"masked_mean: values | {values} | {values} |" in text


def test_it_exits_2_and_still_writes_results_when_there_is_no_exercises_folder(tmp_path, capsys):
    (tmp_path / "fork").mkdir()
    code = cli.main(["grade", str(tmp_path / "fork"), "--out", str(tmp_path / "out")])
    assert code == 2
    assert "has no exercises/ folder" in capsys.readouterr().err
    document = json.loads((tmp_path / "out" / "results.json").read_text())
    assert document["score"] == 0 and "has no exercises/ folder" in document["output"]


def commands_of(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    return next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))


def every_command() -> dict[str, argparse.ArgumentParser]:
    """Every command that runs ('grade', 'rubric check'), and every command that holds others ('rubric')."""
    parser = cli.build_parser()
    return {**commands_of(parser).choices, **cli.every_command(parser)}


def test_it_describes_every_command_in_one_line_in_the_list_and_in_its_help():
    groups = [cli.build_parser(), *[command for command in every_command().values() if command._subparsers]]
    for group in groups:
        listed = {action.dest: action.help for action in commands_of(group)._choices_actions}
        for name, command in commands_of(group).choices.items():
            assert listed[name] and "\n" not in listed[name], f"{name} has no line in the list of commands"
            assert command.description == listed[name], f"{name} --help does not say what it does"
            assert listed[name] in " ".join(command.format_help().split())
    assert "rubric check" in cli.every_command(cli.build_parser()), "a command's own commands are listed"


NAMES = {
    "FORK",
    "ROSTER",
    "RESULTS",
    "OUT",
    "RUBRIC",
    "LIST",
    "ZIP",
    "DIR",
}  # a path's names, the same in every command
READS = {
    "grade": "FORK",
    "grade-all": "ROSTER",
    "gradebook": "RESULTS",
    "report": "RESULTS",
    "merge": "RESULTS",
    "similarity": "ROSTER",
    "rubric check": "RUBRIC",
}


def test_it_names_the_same_thing_the_same_way_in_every_command():
    for name, command in every_command().items():
        paths = [action for action in command._actions if action.type is Path]
        for action in paths:
            assert (action.metavar or action.dest.upper()) in NAMES, (name, action.dest, action.metavar)
        if name in READS:
            assert [action.metavar for action in paths if not action.option_strings] == [READS[name]], name
        for option in ("--out", "--rubric"):
            found = [action for action in paths if option in action.option_strings]
            assert all(action.metavar in (None, option[2:].upper()) for action in found), (name, option)


def test_it_shows_the_default_of_every_option_that_has_one():
    for name, command in every_command().items():
        formatter = command._get_formatter()
        for action in command._actions:
            if action.default not in (None, False, argparse.SUPPRESS) and action.help:
                assert "(default: " in formatter._get_help_string(action), (name, action.dest)
    grade = " ".join(commands_of(cli.build_parser()).choices["grade"].format_help().split())
    assert "where results.json and summary.md go (default: grading)" in grade


def test_it_lists_every_commands_exit_statuses_in_its_help():
    parser = cli.build_parser()
    statuses = {commands.EXIT_OK, commands.EXIT_BELOW, commands.EXIT_ERROR}
    assert all(f"\n  {status}  " in parser.format_help() for status in statuses)
    for name, command in every_command().items():
        help = command.format_help()
        assert "exit status:" in help and f"\n  {commands.EXIT_OK}  " in help, f"{name} --help has no exit statuses"
    grade = commands_of(parser).choices["grade"].format_help()
    assert f"\n  {commands.EXIT_BELOW}  graded, and the score is below --fail-under" in grade


def test_it_says_its_version_which_is_the_packages(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"autograde {__version__}\n"
    assert __version__ == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


MISSING = {  # each command given a path that does not exist, in the place of its METAVAR
    "grade": (["grade", "{missing}", "--out", "{out}"], "FORK"),
    "grade-all": (["grade-all", "{missing}", "--out", "{out}"], "ROSTER"),
    "gradebook": (["gradebook", "{missing}", "--out", "{out}"], "RESULTS"),
    "report": (["report", "{missing}", "--out", "{out}"], "RESULTS"),
    "merge": (["merge", "{folder}", "{missing}", "--out", "{out}"], "RESULTS"),
    "report --roster": (["report", "{folder}", "--roster", "{missing}", "--out", "{out}"], "LIST"),
    "merge --roster": (["merge", "{folder}", "--roster", "{missing}", "--out", "{out}"], "LIST"),
    "rubric check": (["rubric", "check", "{missing}"], "RUBRIC"),
    "similarity": (["similarity", "{missing}", "--out", "{out}"], "ROSTER"),
    "similarity --known": (["similarity", "{folder}", "--known", "{missing}", "--out", "{out}"], "DIR"),
}


@pytest.mark.parametrize("case", MISSING)
def test_it_refuses_a_path_that_does_not_exist_saying_so_and_does_nothing(tmp_path, capsys, case):
    arguments, metavar = MISSING[case]
    (tmp_path / "folder").mkdir()
    paths = {"missing": tmp_path / "does-not-exist", "out": tmp_path / "out", "folder": tmp_path / "folder"}
    assert cli.main([argument.format(**paths) for argument in arguments]) == commands.EXIT_ERROR
    printed = capsys.readouterr()
    assert printed.err == f"autograde: {metavar} does not exist: {paths['missing']}\n" and printed.out == ""
    assert not (tmp_path / "out").exists(), "nothing is graded or written"


def roster_folder(folder: Path, *students: str) -> Path:
    """A roster: one fork per student (a folder holding exercises/, empty: nothing here is graded)."""
    for student in students:
        (folder / student / "exercises").mkdir(parents=True)
    return folder


WRONG_FOLDERS = {  # a command given a folder that is not what it reads, and the one line that says so
    "grade-all on an empty folder": (
        ["grade-all", "{folder}", "--out", "{out}"],
        "{folder}/ holds no folder to grade (a roster is a folder with one fork per student)",
    ),
    "grade-all on one fork": (
        ["grade-all", "{fork}", "--out", "{out}"],
        "{fork}/ is one fork (it holds exercises/): grade it with `autograde grade {fork}/`, or give the folder "
        "that holds the forks",
    ),
    "grade on a roster": (
        ["grade", "{roster}", "--out", "{out}"],
        "{roster}/ is a roster (2 folders with exercises/): grade it with `autograde grade-all {roster}/ --out "
        "results/`",
    ),
}


@pytest.mark.parametrize("case", WRONG_FOLDERS)
def test_it_refuses_a_folder_that_is_not_what_the_command_reads_in_one_line_and_writes_nothing(tmp_path, capsys, case):
    arguments, line = WRONG_FOLDERS[case]
    (tmp_path / "folder").mkdir()
    (tmp_path / "fork" / "exercises").mkdir(parents=True)
    (tmp_path / "fork" / "tests").mkdir()
    paths = {"folder": tmp_path / "folder", "fork": tmp_path / "fork", "out": tmp_path / "out"}
    paths["roster"] = roster_folder(tmp_path / "roster", "alice", "bob")
    assert cli.main([argument.format(**paths) for argument in arguments]) == commands.EXIT_ERROR
    printed = capsys.readouterr()
    assert printed.err == f"autograde: {line.format(**paths)}\n" and printed.out == ""
    assert not (tmp_path / "out").exists(), "nothing is graded or written"


def gradings(folder: Path, *students: str) -> Path:
    """A folder of gradings: one results.json per student (a grading that failed: enough to be listed)."""
    failed = json.dumps({"score": 0, "tests": []})
    for student in students:
        (folder / student).mkdir(parents=True)
        (folder / student / "results.json").write_text(failed)
    return folder


ROSTER_READERS = {
    "gradebook": ["gradebook", "{results}", "--out", "{out}", "--roster", "{roster}"],
    "report": ["report", "{results}", "--out", "{out}", "--roster", "{roster}"],
    "merge": ["merge", "{results}", "--out", "{out}", "--roster", "{roster}"],
}


@pytest.mark.parametrize("command", ROSTER_READERS)
@pytest.mark.parametrize(
    ("lines", "meant"),
    [
        ("alice\nbob\ndnaa\n", "dnaa names no folder of {results}: did you mean dana?"),
        ("course-org/alice\ncourse-org/bob\ncourse-org/dana\n", "course-org/alice names no folder of {results}: "
         "did you mean alice?"),
    ],
)  # fmt: skip
def test_every_command_that_reads_a_roster_file_refuses_a_line_that_misnames_a_folder_saying_which_it_meant(
    tmp_path, capsys, command, lines, meant
):
    paths = {"results": gradings(tmp_path / "results", "alice", "bob", "dana"), "out": tmp_path / "out"}
    paths["roster"] = tmp_path / "week07.txt"
    paths["roster"].write_text(lines)
    assert cli.main([argument.format(**paths) for argument in ROSTER_READERS[command]]) == commands.EXIT_ERROR
    printed = capsys.readouterr()
    assert printed.err == (
        f"autograde: {paths['roster']}: {meant.format(**paths)} (a line is a student's folder name, as grade-all "
        "names it, or their repository, owner/name)\n"
    )
    assert printed.out == "" and not (tmp_path / "out").exists(), "nothing is written"


def test_its_gradebook_lists_a_local_rosters_students_by_their_folder_names_each_once(tmp_path, capsys):
    results = gradings(tmp_path / "results", "alice", "bob", "carol", "dan")
    (tmp_path / "week07.txt").write_text("# the folders grade-all graded, and zoe\nalice\nbob\ncarol\ndan\nzoe\n")
    arguments = ["gradebook", str(results), "--out", str(tmp_path / "book"), "--roster", str(tmp_path / "week07.txt")]
    assert cli.main(arguments) == commands.EXIT_OK
    assert f"{tmp_path / 'book' / 'overview.md'}: 5 students\n" in capsys.readouterr().out
    overview = (tmp_path / "book" / "overview.md").read_text()
    assert all(overview.count(f"| {name} |") == 1 for name in ("alice", "bob", "carol", "dan", "zoe"))
    assert f"- zoe: `{shards.NOT_GRADED}`" in overview, "a student on the roster but not graded is listed, and why"


def test_its_rubric_check_says_what_a_rubric_sets_as_the_module_does_or_the_line_that_is_wrong(tmp_path, capsys):
    assert cli.main(["rubric", "check"]) == commands.EXIT_OK
    first, *policies = capsys.readouterr().out.splitlines()
    graded = rubric.load()
    assert (
        first == f"{RUBRIC}: OK, {len(graded.items)} items, {graded.total:g} points, {len(graded.recipes)} thresholds"
    )
    assert policies == rubric.describe(graded)[1:]
    bad = rubric_file(tmp_path / "section.toml", BAD_RUBRICS["a credit above 1"][0])
    assert cli.main(["rubric", "check", str(bad)]) == commands.EXIT_ERROR
    printed = capsys.readouterr()
    assert printed.out == "" and printed.err.startswith(f"autograde: {bad}: {BAD_RUBRICS['a credit above 1'][1]}")
    assert len(printed.err.splitlines()) == 1


def test_its_stub_check_says_that_the_stubs_are_current(capsys):
    assert cli.main(["stubs", "--check"]) == commands.EXIT_OK
    assert capsys.readouterr().out == "exercises/ is up to date: the stubs are what solutions/ generates\n"


def test_it_exits_2_on_an_unknown_name_in_only(tmp_path, capsys):
    assert cli.main(["grade", str(tmp_path), "--only", "rnn_forwards"]) == 2
    assert "no rubric items for rnn_forwards" in capsys.readouterr().err


BAD_RUBRICS = {
    "an unknown id in [credit]": ("[credit]\nR9 = 0.5\n", "[credit] names R9, which is not a catalogue id"),
    "a credit above 1": ("[credit]\nR1 = 2\n", "credit.R1 must be a fraction from 0 to 1, not 2"),
    "a credit below 0": ("[credit]\nR1 = -0.25\n", "credit.R1 must be a fraction from 0 to 1, not -0.25"),
    "a negative max_days": ("[late]\nper_day = 0.1\nmax_days = -2\n", "late.max_days must be a whole number"),
    "an unknown keep": ('[late]\nper_day = 0.1\nmax_days = 3\nkeep = "first"\n', "late.keep must be one of"),
    "a per_day above 1": ("[late]\nper_day = 10\nmax_days = 3\n", "late.per_day must be a fraction from 0 to 1"),
    "an unknown late setting": ("[late]\nper_day = 0.1\nmax_days = 3\ngrace = 1\n", "unknown setting late.grace"),
    "a file that is not TOML": ("[late\n", "cannot be read as a rubric"),
}


@pytest.mark.parametrize("problem", BAD_RUBRICS)
def test_it_exits_2_with_one_line_saying_what_is_wrong_with_a_rubric_file(tmp_path, capsys, problem):
    sections, message = BAD_RUBRICS[problem]
    bad = rubric_file(tmp_path / "section.toml", sections)
    code = cli.main(["grade", str(tmp_path), "--out", str(tmp_path / "out"), "--rubric", str(bad)])
    error = capsys.readouterr().err
    assert code == 2 and error.splitlines() == [error.strip()], error
    assert error.startswith(f"autograde: {bad}") and message in error
    assert not (tmp_path / "out").exists(), "nothing is graded by a rubric that cannot be used"


@pytest.mark.parametrize("command", ["grade", "grade-all", "gradebook", "report"])
def test_every_command_that_reads_the_rubric_refuses_a_bad_one_the_same_way(tmp_path, capsys, command):
    bad = rubric_file(tmp_path / "section.toml", BAD_RUBRICS["a negative max_days"][0])
    (tmp_path / "folder").mkdir()
    out = ["--out", str(tmp_path / "out")]
    assert cli.main([command, str(tmp_path / "folder"), *out, "--rubric", str(bad)]) == 2
    error = capsys.readouterr().err
    assert error == f"autograde: {bad}: late.max_days must be a whole number of days, at least 0, not -2\n"
    assert cli.main([command, str(tmp_path / "folder"), *out, "--rubric", str(tmp_path / "nowhere.toml")]) == 2
    assert f"{tmp_path / 'nowhere.toml'} cannot be read as a rubric" in capsys.readouterr().err


@pytest.fixture
def hostile_fork(submission: Callable[..., Path]) -> Iterator[tuple[Path, list[str]]]:
    """The reference's modules in a fork that also holds every hostile name and a tree 1,100 folders deep."""
    fork = submission()
    names = hostile.plant(fork)
    yield fork, names
    hostile.remove(fork)  # pytest's own clean-up recurses: it cannot remove such a tree


@pytest.mark.gradings
def test_it_grades_a_hostile_tree_and_writes_every_report_with_every_name_inert(
    hostile_fork, tmp_path, monkeypatch, capsys
):
    fork, names = hostile_fork
    step_summary = tmp_path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    assert cli.main(["grade", str(fork), "--out", str(tmp_path / "out"), "--only", "gather_final"]) == 0
    document = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert document["score"] == points("gather_final"), document["output"]
    assert set(names) <= set(document["extra_data"]["ignored_files"]), "every name listed, escaped"
    assert "notes-\\xff.txt" in document["extra_data"]["ignored_files"]
    deep = [entry for entry in document["extra_data"]["left_out"] if entry["why"] == "too deep"]
    assert [entry["path"] for entry in deep] == ["d/" * 33], "the listing stops at its depth, and says so"
    headings = [f"{TITLE}: {points('gather_final'):g} / {points('gather_final'):g}", "Not read by the grader"]
    for report in (tmp_path / "out" / "summary.md", step_summary):
        assert hostile.live(report.read_text(encoding="utf-8"), names, headings) == [], report.name
    printed = capsys.readouterr()
    assert hostile.workflow_commands(printed.out + printed.err) == [] and "\x1b" not in printed.out + printed.err


@pytest.mark.gradings
def test_it_says_that_a_module_over_the_size_limit_was_not_read(submission, tmp_path):
    fork = submission()
    with open(fork / "exercises" / "baseline.py", "r+b") as module:
        module.truncate(200 << 20)  # 200 MiB, sparse: no disk is spent
    assert cli.main(["grade", str(fork), "--out", str(tmp_path / "out"), "--only", "bag_of_counts"]) == 0
    document = json.loads((tmp_path / "out" / "results.json").read_text())
    (test,) = document["tests"]
    assert test["score"] == 0
    assert test["output"].startswith(
        "exercises/baseline.py was not read by the grader: it is 200 MiB, over the 1 MiB limit for one module."
    )
    assert {"path": "exercises/baseline.py", "why": "too big"}.items() <= document["extra_data"]["left_out"][0].items()


def test_it_says_in_one_line_which_todo_lacks_its_record_while_the_week_is_being_edited(monkeypatch, capsys):
    def lacking(*_: object) -> tuple:
        raise todos.RecordError("no record in autograder/todos for the TODO of gru_step in recurrence.py")

    monkeypatch.setattr(todos, "records", lacking)
    assert cli.main(["rubric", "check"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("no record in autograder/todos for the TODO of gru_step in recurrence.py") and "\n" not in err

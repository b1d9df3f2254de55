"""`autograde similarity ROSTER --out OUT [--known DIR]`: the files written, what is said, what is refused."""

import json
import shutil

from autograder import cli, commands, todos
from autograder.locations import EXERCISES, SOLUTIONS


def fork(roster, name, modules):
    folder = roster / name / "exercises"
    shutil.copytree(EXERCISES, folder, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    for module, source in modules.items():
        shutil.copy(source, folder / f"{module}.py")


def test_it_writes_the_pairs_and_the_known_matches_and_says_what_to_look_at(tmp_path, capsys):
    roster = tmp_path / "roster"
    fork(roster, "alice", {"recurrence": SOLUTIONS / "recurrence.py", "padding": SOLUTIONS / "padding.py"})
    fork(roster, "bob", {})
    assert cli.main(["similarity", str(roster), "--out", str(tmp_path / "out")]) == commands.EXIT_OK
    written = json.loads((tmp_path / "out" / "similarity.json").read_text())
    assert [(pair["a"], pair["b"], pair["score"]) for pair in written["pairs"]] == [("alice", "bob", 0.0)]
    assert [(match["student"], match["source"]) for match in written["known"]] == [("alice", "solutions")]
    printed = capsys.readouterr()
    assert "1 pairs (0 to look at), 1 student close to a known source" in printed.out and printed.err == ""


def test_it_names_a_module_it_could_not_read_inert_and_goes_on(tmp_path, capsys):
    roster = tmp_path / "roster"
    fork(roster, "eve\x1b[31m::error::", {"recurrence": SOLUTIONS / "recurrence.py"})
    (roster / "eve\x1b[31m::error::" / "exercises" / "padding.py").write_text("def gather_final(:\n")
    fork(roster, "bob", {"recurrence": SOLUTIONS / "recurrence.py"})
    assert cli.main(["similarity", str(roster), "--out", str(tmp_path / "out")]) == commands.EXIT_OK
    err = capsys.readouterr().err
    assert err.startswith("autograde: not compared: eve\\x1b[31m::error::: padding.py: SyntaxError")
    assert "\x1b" not in err and err.count("\n") == 1
    pairs = json.loads((tmp_path / "out" / "similarity.json").read_text())["pairs"]
    recurrence = {record.target: 1.0 for record in todos.records() if record.module == "recurrence"}
    assert pairs[0]["functions"] == recurrence, "the rest is compared"


def test_its_words_point_at_code_to_look_at_and_never_accuse():
    help = cli.build_parser()._subparsers._group_actions[0].choices["similarity"].format_help()
    assert "look at" in help and "plagiari" not in help.lower()
    assert "plagiari" not in (commands.similarity_command.__doc__ or "").lower()

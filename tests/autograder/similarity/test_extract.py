"""Extraction: each TODO's body and the helpers it calls, read as data; a bad file costs only its module."""

import os
import shutil
from dataclasses import replace

import pytest
from similarity_attacks import CALLER, elements, long_line

from autograder.locations import EXERCISES, SOLUTIONS
from autograder.similarity import extract
from autograder.similarity.extract import Week, module_functions, read_work
from autograder.similarity.fingerprints import Hasher
from autograder.similarity.records import AuthorKind
from autograder.similarity.run import run

LIMIT = 64 * 1024
NODES = 10_000


@pytest.fixture(scope="module")
def week():
    return Week.load(LIMIT, NODES)


def fork(tmp_path, name="student", modules=None):
    """A fork: the stubs, with some modules replaced (module -> text)."""
    folder = tmp_path / name / "exercises"
    shutil.copytree(EXERCISES, folder, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    for module, text in (modules or {}).items():
        (folder / f"{module}.py").write_text(text, encoding="utf-8")
    return folder.parent


def student(folder, week):
    return read_work(folder, folder.name, AuthorKind.STUDENT, "", week)


HELPED = """
import torch


def _scale(values, by):
    return values * by + torch.ones_like(values).sum(dim=0)


def _never_called(values):
    return values.flip(0).cumsum(dim=0) * 17


def gather_final(output, lengths):
    rows = torch.arange(output.shape[0])
    return _scale(output[rows, lengths - 1], 2.5)
"""


def test_it_takes_each_todo_with_the_helpers_it_calls_and_not_the_others(tmp_path, week):
    work = student(fork(tmp_path, modules={"padding": HELPED}), week)
    shown = work.author.functions["padding.gather_final"]
    assert shown.startswith("def gather_final") and "def _scale" in shown and "_never_called" not in shown
    assert list(work.author.functions) == ["padding.gather_final"], "the other TODOs are still the stubs"


def test_it_never_counts_the_stubs_text_as_the_students(tmp_path, week):
    work = student(fork(tmp_path), week)
    assert work.author.functions == {} and work.prints == {} and work.unread == []


def test_it_shows_the_reference_for_every_todo_with_a_passage_at_each_print(week):
    work = read_work(SOLUTIONS, "solutions", AuthorKind.KNOWN, "solutions", week)
    assert len(work.author.functions) == sum(len(functions) for functions in week.functions.values())
    text = work.author.functions["recurrence.lstm_step"]
    passages = {text[span.start : span.end] for spans in work.prints["recurrence.lstm_step"].values() for span in spans}
    assert "i, f, g, o = gates.chunk(4, dim=1)" in passages
    assert not any("TODO" in passage or '"""' in passage for passage in passages)


def test_it_names_a_module_that_does_not_parse_and_compares_the_others(tmp_path, week):
    folder = fork(tmp_path, modules={"padding": HELPED, "recurrence": "def rnn_forward(:\n"})
    work = student(folder, week)
    assert list(work.author.functions) == ["padding.gather_final"]
    assert [why.split(":")[0] for why in work.unread] == ["recurrence.py"] and "SyntaxError" in work.unread[0]


def test_it_skips_a_module_over_the_size_limit(tmp_path, week):
    huge = HELPED + "\n" + "#" * LIMIT
    work = student(fork(tmp_path, modules={"padding": huge}), week)
    assert work.author.functions == {} and "longer than" in work.unread[0]


@pytest.mark.parametrize("deep", ["(" * 30_000 + "1" + ")" * 30_000, "1" + " + 1" * 15_000])
def test_it_survives_a_deeply_nested_expression_costing_only_its_module(tmp_path, week, deep):
    nested = f"def gather_final(output, lengths):\n    return {deep}\n"
    work = student(
        fork(tmp_path, modules={"padding": nested, "baseline": HELPED.replace("gather_final", "bag_of_counts")}), week
    )
    assert list(work.author.functions) == ["baseline.bag_of_counts"]
    assert work.unread and work.unread[0].startswith("padding.py")


def test_it_follows_no_symbolic_link_to_a_module(tmp_path, week):
    folder = fork(tmp_path)
    (folder / "exercises" / "recurrence.py").unlink()
    (folder / "exercises" / "recurrence.py").symlink_to(SOLUTIONS / "recurrence.py")
    work = student(folder, week)
    assert work.author.functions == {} and "recurrence.py" in work.unread[0]


def test_it_reads_no_fifo_and_does_not_wait_on_one(tmp_path, week):
    folder = fork(tmp_path)
    (folder / "exercises" / "padding.py").unlink()
    os.mkfifo(folder / "exercises" / "padding.py")
    work = student(folder, week)
    assert work.author.functions == {} and "not a regular file" in work.unread[0]


def test_it_leaves_out_a_student_folder_that_is_a_symbolic_link(tmp_path):
    roster = tmp_path / "roster"
    fork(roster, "alice", {"padding": HELPED})
    fork(roster, "bob", {"padding": HELPED})
    (roster / "mallory").symlink_to(fork(tmp_path, "elsewhere", {"padding": HELPED}))
    found = run(roster, []).similarity
    assert [(pair.a, pair.b) for pair in found.pairs] == [("alice", "bob")] and "mallory" not in found.authors


def test_it_takes_a_known_folder_as_one_submission_or_as_a_roster_of_them(tmp_path):
    roster = tmp_path / "roster"
    fork(roster, "alice", {"padding": HELPED})
    fork(roster, "bob", {"padding": HELPED.replace("2.5", "3.5")})
    web = tmp_path / "web"
    web.mkdir()
    (web / "padding.py").write_text(HELPED, encoding="utf-8")
    last_year = tmp_path / "last_year"
    fork(last_year, "carol", {"padding": HELPED})
    found = run(roster, [web, last_year]).similarity
    known = {(match.student, match.source, match.author) for match in found.known}
    assert ("alice", "web", "web") in known and ("alice", "last_year", "last_year/carol") in known
    assert found.authors["last_year/carol"].kind is AuthorKind.KNOWN and found.authors["web"].label == "web"


def test_it_keeps_a_student_named_like_a_known_source_apart_from_it(tmp_path):
    roster = tmp_path / "roster"
    fork(roster, "solutions", {"padding": HELPED, "recurrence": (SOLUTIONS / "recurrence.py").read_text()})
    fork(roster, "bob", {"padding": HELPED})
    web = tmp_path / "other" / "bob"
    web.mkdir(parents=True)
    (web / "padding.py").write_text(HELPED, encoding="utf-8")
    found = run(roster, [web]).similarity
    assert found.authors["solutions"].kind is AuthorKind.STUDENT and found.authors["bob"].kind is AuthorKind.STUDENT
    assert found.authors["solutions (2)"].label == "solutions" and found.authors["bob (2)"].label == "bob"
    known = {(match.student, match.author) for match in found.known}
    assert known == {("solutions", "bob (2)"), ("bob", "bob (2)"), ("solutions", "solutions (2)")}


def test_it_places_passages_right_after_text_that_is_not_ascii_or_breaks_lines_for_str_only(tmp_path, week):
    odd = HELPED.replace("    rows =", '    label = "é\\u2028\\x0c—ok"  # ünïcode \x0c comment\n    rows =')
    work = student(fork(tmp_path, modules={"padding": odd}), week)
    text = work.author.functions["padding.gather_final"]
    passages = {text[s.start : s.end] for spans in work.prints["padding.gather_final"].values() for s in spans}
    assert "rows = torch.arange(output.shape[0])" in passages
    assert "return _scale(output[rows, lengths - 1], 2.5)" in passages


def _counting(monkeypatch, owner, name):
    """Count the calls of owner.name (and the characters of their first argument when it is a str)."""
    calls, original = [], getattr(owner, name)

    def counted(*args, **kwargs):
        calls.append(args[0] if args and isinstance(args[0], str) else None)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


@pytest.mark.parametrize("size", [16 * 1024, 32 * 1024])
def test_it_maps_a_long_lines_columns_once_however_many_passages_it_holds(tmp_path, week, monkeypatch, size):
    source = long_line(size, "é")
    tables = _counting(monkeypatch, extract, "characters_before")
    places = _counting(monkeypatch, extract.Lines, "offset")
    found = module_functions(source, "padding", week.functions["padding"], replace(week, nodes=10**6))
    assert len(places) > elements(size, "é"), "a place for each element of the helper, at least"
    assert [len(line) for line in tables] == [len(max(source.splitlines(), key=len)) + 1], "one table, that line's"
    helper = found["padding.gather_final"].text
    assert helper.count("-~-~-~x") == elements(size, "é") and "'é'" in helper


def test_it_hashes_at_most_the_budget_of_a_todo_and_says_where_it_stopped(tmp_path, week, monkeypatch):
    hashed = _counting(monkeypatch, Hasher, "_digest")
    cut = {}
    for size in (16 * 1024, 32 * 1024):
        hashed.clear()
        work = student(fork(tmp_path / str(size), modules={"padding": long_line(size, "é")}), replace(week, nodes=500))
        cut[size] = work.cut
        assert len(hashed) <= 3 * 501, "each of padding's three TODOs hashes at most 500 nodes"
    assert [c.compared for c in cut[16 * 1024]] == [c.compared for c in cut[32 * 1024]], "the same part compared"
    (first,) = cut[32 * 1024]
    text = work.author.functions["padding.gather_final"]
    assert (first.author, first.function) == ("student", "padding.gather_final")
    assert len(text) == first.compared < first.length and text.endswith("-~-~-~x")
    helper = next(line for line in long_line(32 * 1024, "é").splitlines() if line.startswith("def helper"))
    assert first.length == len(CALLER.strip("\n") + "\n\n" + helper), "the whole TODO and its helper, counted"
    assert all(span.end <= len(text) for spans in work.prints["padding.gather_final"].values() for span in spans)

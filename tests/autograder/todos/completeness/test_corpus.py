"""`autograde todo check`, the corpus: each mistake of an exercise's own record has a file of tests/corpus/mistakes/
about its function, recognised by its name and its first line; a missing one says what to write where, a file that
does not count says why, another exercise's mistake (`also`) needs none, and an installed grader's is not checked."""

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from autograder import todos
from autograder.locations import CORPUS
from autograder.todos.completeness import Finding, Paths, Requirement, Status, corpus

LSTM = todos.record("lstm_step")
HEADER = "# module: recurrence  function: lstm_step  mistake: {}\n# Appended to the reference module.\n"


def said(findings: list[Finding], status: Status = Status.MISSING) -> list[str]:
    return [finding.words for finding in findings if finding.status == status]


@pytest.fixture
def mistakes(tmp_path: Path) -> Path:
    """A copy of the corpus's folder of mistakes (in a corpus of its own), to break."""
    copy = tmp_path / "corpus" / "mistakes"
    shutil.copytree(CORPUS / "mistakes", copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_every_exercise_of_the_checkout_has_a_corpus_file_for_each_of_its_own_mistakes():
    for found in todos.records():
        assert [f.status for f in corpus.corpus_findings(found)] == [Status.OK], found.key


def test_it_counts_lstm_steps_files_and_says_a_mistake_in_also_needs_none_of_its_own():
    assert said(corpus.corpus_findings(LSTM), Status.OK)[0].startswith(
        "each of its mistakes (L1, L2, L3, L4) has a file of tests/corpus/mistakes/ ("
    )
    (words,) = said(corpus.corpus_findings(todos.record("masked_mean")), Status.OK)
    assert words.endswith("; L3 and R8, in `also`, need none of their own")


def test_a_mistake_without_a_file_is_missing_saying_what_to_write_and_where(mistakes):
    for path in mistakes.glob("L4_*.py"):
        path.unlink()
    assert said(corpus.corpus_findings(LSTM, Paths(corpus=mistakes.parent))) == [
        f"mistake L4 has no corpus file: write {mistakes}/L4_<name>.py, its first line '# module: recurrence  "
        "function: lstm_step  mistake: L4', then the whole function lstm_step as a student writes it with L4: it is "
        "appended after the reference module (solutions/recurrence.py), so only it differs"
    ]


def test_a_method_is_written_as_its_whole_class(mistakes):
    for path in mistakes.glob("C1_*.py"):
        path.unlink()
    (words,) = said(corpus.corpus_findings(todos.record("SequenceClassifier"), Paths(corpus=mistakes.parent)))
    assert "function: SequenceClassifier  mistake: C1', then the whole class SequenceClassifier as" in words


def test_a_file_of_another_function_does_not_count_for_its_mistake(mistakes):
    for path in mistakes.glob("L3_*.py"):
        if path.read_text().startswith(HEADER.format("L3")[:50]):  # lstm_step's own; the others' L3 stay
            path.unlink()
    assert [w.partition(":")[0] for w in said(corpus.corpus_findings(LSTM, Paths(corpus=mistakes.parent)))] == [
        "mistake L3 has no corpus file"
    ]


@pytest.mark.parametrize(
    ("first_line", "why"),
    [
        ("# lstm_step with L4\n", "its first line is not '# module: recurrence  function: lstm_step  mistake: L4'"),
        ("# module: padding  function: lstm_step  mistake: L4\n", "its first line declares module padding: lstm_step"),
        ("# module: recurrence  function: lstm_step  mistake: L2\n", "declares mistake: L2 and its name starts L4_"),
    ],
)
def test_a_file_named_for_a_mistake_that_does_not_count_says_why(mistakes, first_line, why):
    for path in mistakes.glob("L4_*.py"):
        path.write_text(first_line + path.read_text().partition("\n")[2])
    (words,) = said(corpus.corpus_findings(LSTM, Paths(corpus=mistakes.parent)))
    assert words.startswith(f"mistake L4 has no corpus file that counts: {mistakes}/L4_") and why in words


def test_a_file_of_several_mistakes_counts_for_each_of_them(mistakes):
    for path in mistakes.glob("L*.py"):
        path.unlink()
    (mistakes / "L1+L2+L3+L4_everything.py").write_text(HEADER.format("L1+L2+L3+L4"))
    assert said(corpus.corpus_findings(LSTM, Paths(corpus=mistakes.parent)), Status.OK) == [
        f"each of its mistakes (L1, L2, L3, L4) has a file of {mistakes}/ (1 file)"
    ]


def test_an_exercise_with_no_mistake_of_its_own_needs_no_file(mistakes):
    shutil.rmtree(mistakes)
    bare = replace(LSTM, mistakes={}, also=("G5",))
    assert said(corpus.corpus_findings(bare, Paths(corpus=mistakes.parent)), Status.OK) == [
        "it has no catalogued mistake of its own to write; G5, in `also`, needs none of its own"
    ]


def test_without_a_corpus_an_installed_graders_check_notes_it_and_misses_nothing(tmp_path):
    found = corpus.corpus_findings(LSTM, Paths(corpus=tmp_path / "tests" / "corpus"))
    assert [(f.requirement, f.status) for f in found] == [(Requirement.CORPUS, Status.NOTE)]
    assert found[0].words == f"not checked: no {tmp_path}/tests/corpus/ here (run it from a checkout)"


def test_a_corpus_file_is_recognised_by_its_name_and_first_line(tmp_path):
    path = tmp_path / "C3+C4_pooling.py"
    path.write_text(
        "# module: classifier  function: SequenceClassifier  mistake: C3+C4\nclass SequenceClassifier: ...\n"
    )
    assert corpus.MistakeFile.read(path) == corpus.MistakeFile(
        path, "C3+C4", "classifier", "SequenceClassifier", "C3+C4"
    )
    path.write_bytes(b"\xff not a header\n")
    assert corpus.MistakeFile.read(path) == corpus.MistakeFile(path, "C3+C4")

"""`autograde todo check`, the recommended files: tests of its checks and correct corpus files are noted where absent,
never missing, and an installed grader's are not checked."""

import shutil
from pathlib import Path

from autograder import todos
from autograder.locations import CHECK_TESTS, CORPUS
from autograder.todos.completeness import Paths, Requirement, Status, recommended

LSTM = todos.record("lstm_step")


def copied(tmp_path: Path) -> Paths:
    """Copies of tests/corpus/correct/ and of lstm_step's tests of its checks, to break."""
    shutil.copytree(CORPUS / "correct", tmp_path / "corpus" / "correct")
    (tmp_path / "todos" / "lstm_step").mkdir(parents=True)
    shutil.copy(CHECK_TESTS / "lstm_step" / "test_checks.py", tmp_path / "todos" / "lstm_step")
    return Paths(corpus=tmp_path / "corpus", check_tests=tmp_path / "todos")


def test_lstm_step_has_tests_of_its_checks_and_correct_corpus_files():
    (found,) = recommended.recommended_findings(LSTM)
    assert (found.requirement, found.status) == (Requirement.RECOMMENDED, Status.OK)
    assert found.words.startswith("tests of its checks (tests/autograder/todos/lstm_step/test_checks.py) and ")


def test_a_correct_file_counts_by_its_first_line_not_its_name(tmp_path):
    paths = copied(tmp_path)
    for path in (paths.corpus / "correct").glob("*.py"):
        path.unlink()
    (paths.corpus / "correct" / "lstm_step_other.py").write_text("# module: recurrence  function: rnn_forward\n")
    (paths.corpus / "correct" / "gates_fused.py").write_text("# module: recurrence  function: lstm_step\n")
    assert recommended.correct_files(LSTM, paths.corpus) == [paths.corpus / "correct" / "gates_fused.py"]


def test_each_absent_recommended_file_is_a_note_saying_what_to_write_and_never_missing(tmp_path):
    paths = copied(tmp_path)
    (paths.check_tests / "lstm_step" / "test_checks.py").unlink()
    for path in (paths.corpus / "correct").glob("lstm_step_*.py"):
        path.unlink()
    found = recommended.recommended_findings(LSTM, paths)
    assert [finding.status for finding in found] == [Status.NOTE, Status.NOTE]
    assert found[0].words == (
        f"no tests of its checks: write {paths.check_tests}/lstm_step/test_checks.py, a test per check's own cases "
        "(recommended, not required)"
    )
    assert found[1].words.startswith(f"no correct corpus file written otherwise: write {paths.corpus}/correct/lstm_")
    assert "its first line '# module: recurrence  function: lstm_step'" in found[1].words


def test_without_tests_an_installed_graders_check_notes_it(tmp_path):
    found = recommended.recommended_findings(LSTM, Paths(corpus=tmp_path / "corpus", check_tests=tmp_path / "todos"))
    assert [(finding.status, finding.words) for finding in found] == [
        (Status.NOTE, f"not checked: no {tmp_path}/todos/ here (run it from a checkout)")
    ]

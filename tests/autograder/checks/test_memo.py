"""The memo of the reference's answers: kept once, read back only where it may be trusted, never wrong."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from autograder import fingerprint
from autograder.checks import memo, remember
from autograder.runtime import codec
from autograder.student import InProcess
from autograder.todos.bag_of_counts.checks import check_bag_of_counts_values
from autograder.todos.fit_baseline.checks import check_fit_baseline_accuracy
from solutions import baseline as reference
from solutions import data

TOKENS = torch.tensor([[1, 2, 9, 0], [3, 3, 0, 0]])
ANOTHER_UID = 60990


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    kept = tmp_path / "cache" / "memo"
    monkeypatch.setattr(memo, "memo_folder", lambda: kept)
    monkeypatch.delenv(memo.NO_MEMO, raising=False)
    assert memo.ready() == kept  # as a grading makes it, before its worker starts
    return kept


@pytest.fixture
def computed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The questions the reference was asked here, in order (the memo answered the others)."""
    asked: list[str] = []
    compute = memo._computed

    def counted(target, args):
        asked.append(target)
        return compute(target, args)

    monkeypatch.setattr(memo, "_computed", counted)
    return asked


def kept_files(folder: Path) -> list[Path]:
    return sorted(path for path in folder.iterdir() if not path.name.startswith("."))


def test_it_asks_the_reference_once_and_reads_the_answer_back_after(folder, computed):
    first = memo.reference("baseline.bag_of_counts", TOKENS)
    again = memo.reference("baseline.bag_of_counts", TOKENS)
    assert computed == ["baseline.bag_of_counts"]
    np.testing.assert_array_equal(again, reference.bag_of_counts(TOKENS))
    assert again.dtype == first.dtype and len(kept_files(folder)) == 1


def test_it_keeps_the_answer_in_a_folder_and_file_only_its_user_may_read_or_write(folder, computed):
    memo.reference("baseline.bag_of_counts", TOKENS)
    assert folder.stat().st_mode & 0o777 == 0o700
    assert all(path.stat().st_mode & 0o077 == 0 for path in kept_files(folder))


def test_it_gives_the_regression_accuracy_the_reference_computes(folder, computed):
    rows = (*data.make_sequences(60, seed=1), *data.make_sequences(30, seed=2))
    assert memo.reference("baseline.fit_baseline", *rows) == reference.fit_baseline(*rows)
    assert memo.reference("baseline.fit_baseline", *rows) == reference.fit_baseline(*rows)
    assert computed == ["baseline.fit_baseline"]


def test_it_asks_again_for_other_arguments(folder, computed):
    memo.reference("baseline.bag_of_counts", TOKENS)
    other = memo.reference("baseline.bag_of_counts", TOKENS.flip(0))
    np.testing.assert_array_equal(other, reference.bag_of_counts(TOKENS.flip(0)))
    assert computed == ["baseline.bag_of_counts"] * 2


def test_it_asks_again_once_the_grader_or_the_reference_changed(folder, computed, monkeypatch):
    memo.reference("baseline.bag_of_counts", TOKENS)
    monkeypatch.setattr(fingerprint, "files_digest", lambda: "another grader")
    memo.reference("baseline.bag_of_counts", TOKENS)
    memo.reference("baseline.bag_of_counts", TOKENS)
    assert computed == ["baseline.bag_of_counts"] * 2  # the stale answer replaced, then read


def test_it_asks_again_once_a_library_changed(folder, computed, monkeypatch):
    memo.reference("baseline.bag_of_counts", TOKENS)
    monkeypatch.setattr(memo, "_version", lambda name: "0.0-another")
    memo.reference("baseline.bag_of_counts", TOKENS)
    assert computed == ["baseline.bag_of_counts"] * 2


def test_it_asks_the_reference_where_the_kept_bytes_are_not_an_answer(folder, computed):
    memo.reference("baseline.bag_of_counts", TOKENS)
    for broken in (b"not an archive", codec.dumps({"key": "a stale key", "value": 1.0}), codec.dumps([1, 2])):
        kept_files(folder)[0].write_bytes(broken)
        np.testing.assert_array_equal(memo.reference("baseline.bag_of_counts", TOKENS), reference.bag_of_counts(TOKENS))
    assert computed == ["baseline.bag_of_counts"] * 4


def test_it_ignores_an_answer_another_user_wrote_or_may_write(folder, computed):
    memo.reference("baseline.bag_of_counts", TOKENS)
    kept = kept_files(folder)[0]
    forged = codec.dumps({"key": memo._key("baseline.bag_of_counts", (TOKENS,)), "value": np.zeros((2, 9))})
    kept.write_bytes(forged)
    kept.chmod(0o666)  # another user could have written it
    np.testing.assert_array_equal(memo.reference("baseline.bag_of_counts", TOKENS), reference.bag_of_counts(TOKENS))
    kept.write_bytes(forged)
    os.chown(kept, ANOTHER_UID, ANOTHER_UID)  # another user's file (the tests run as root)
    kept.chmod(0o600)
    np.testing.assert_array_equal(memo.reference("baseline.bag_of_counts", TOKENS), reference.bag_of_counts(TOKENS))
    assert computed == ["baseline.bag_of_counts"] * 3


def test_it_neither_reads_nor_writes_a_folder_others_may_write(folder, computed):
    memo.reference("baseline.bag_of_counts", TOKENS)
    folder.chmod(0o777)
    for path in kept_files(folder):
        path.unlink()
    memo.reference("baseline.bag_of_counts", TOKENS)
    assert kept_files(folder) == [] and computed == ["baseline.bag_of_counts"] * 2


def test_it_does_not_follow_a_link_in_the_folder(folder, computed, tmp_path):
    memo.reference("baseline.bag_of_counts", TOKENS)
    kept = kept_files(folder)[0]
    elsewhere = tmp_path / "elsewhere.answer"
    kept.rename(elsewhere)
    kept.symlink_to(elsewhere)
    memo.reference("baseline.bag_of_counts", TOKENS)
    assert computed == ["baseline.bag_of_counts"] * 2 and not kept.is_symlink()  # replaced by a file of its own


def test_it_still_answers_where_no_folder_can_be_made(computed, tmp_path, monkeypatch):
    (tmp_path / "a file").write_text("")
    monkeypatch.setattr(memo, "memo_folder", lambda: tmp_path / "a file" / "memo")
    assert memo.ready() is None
    first = memo.reference("baseline.bag_of_counts", TOKENS)
    np.testing.assert_array_equal(first, memo.reference("baseline.bag_of_counts", TOKENS))
    assert computed == ["baseline.bag_of_counts"] * 2 and [p.name for p in tmp_path.iterdir()] == ["a file"]


def test_it_is_neither_read_nor_written_with_no_memo_asked(folder, computed, monkeypatch):
    memo.reference("baseline.bag_of_counts", TOKENS)
    monkeypatch.setenv(memo.NO_MEMO, "1")
    for path in kept_files(folder):
        path.unlink()
    memo.reference("baseline.bag_of_counts", TOKENS)
    assert computed == ["baseline.bag_of_counts"] * 2 and kept_files(folder) == []


def test_it_refuses_arguments_it_cannot_tell_apart(folder):
    with pytest.raises(TypeError, match="not object"):
        memo.reference("baseline.bag_of_counts", object())


def test_it_remembers_every_question_of_the_baseline_checks_so_that_they_ask_none(folder, computed):
    asked, kept = remember.remember()
    assert kept == folder
    assert asked == computed == ["baseline.bag_of_counts", "baseline.bag_of_counts", "baseline.fit_baseline"]
    student = baseline_student()
    check_bag_of_counts_values(student)
    check_fit_baseline_accuracy(student)
    assert computed == asked  # both checks read the answers kept


def test_a_grader_with_the_answers_kept_never_imports_scikit_learn(tmp_path):
    """The memo's whole point: a process that grades the baseline items from kept answers imports no sklearn."""
    environment = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "HOME": str(tmp_path)}
    script = (
        "import sys\n"
        "from autograder import todos\n"
        "from autograder.checks import memo\n"
        "from autograder.student import InProcess\n"
        "answers = {'baseline.bag_of_counts': lambda tokens: memo.reference('baseline.bag_of_counts', tokens),\n"
        "           'baseline.fit_baseline': lambda *rows: memo.reference('baseline.fit_baseline', *rows)}\n"
        "student = InProcess(lambda dotted: answers[dotted])\n"
        "todos.check('bag_of_counts', 'values')(student)\n"
        "todos.check('fit_baseline', 'accuracy')(student)\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] in ('sklearn', 'scipy')))\n"
    )
    warm = [sys.executable, "-m", "autograder.checks.remember"]
    told = subprocess.run(warm, env=environment, capture_output=True, text=True, check=True).stdout
    assert "the reference's answers to 3 questions kept in" in told
    graded = subprocess.run([sys.executable, "-c", script], env=environment, capture_output=True, text=True, check=True)
    assert graded.stdout.strip() == "[]"


def baseline_student() -> InProcess:
    return InProcess(lambda dotted: getattr(reference, dotted.split(".", 1)[1]))

"""The grading fingerprint: the grader's files, the rubric and the versions in one digest, carried by results.json."""

import importlib.metadata
import platform
from pathlib import Path

from autograder import fingerprint, rubric
from autograder.fingerprint import VERSIONED, Fingerprint, files_digest, grader_files, recorded, versions
from autograder.grading import writers
from autograder.grading.grade import failed_grading
from autograder.locations import CHECKS, PACKAGE, ROOT, RUNTIME, SOLUTIONS, SUITES, TODOS


def grader_copy(tmp_path: Path) -> tuple[Path, Path]:
    """A small stand-in for the grader's two packages: a check and a reference."""
    package, solutions = tmp_path / "autograder", tmp_path / "solutions"
    (package / "checks").mkdir(parents=True)
    solutions.mkdir()
    (package / "checks" / "baseline.py").write_text("THRESHOLD = 0.8\n")
    (solutions / "baseline.py").write_text("def fit(): ...\n")
    return package, solutions


def test_it_hashes_every_file_of_the_checks_suites_runtime_sandbox_grading_and_reference():
    names = {relative for relative, _ in grader_files()}
    for folder in (CHECKS, SUITES, RUNTIME, PACKAGE / "sandbox", PACKAGE / "grading", SOLUTIONS):
        for path in folder.glob("*.py"):
            assert path.relative_to(ROOT).as_posix() in names
    for path in TODOS.glob("*/*.py"):  # each exercise's checks and variants
        assert path.relative_to(ROOT).as_posix() in names
    assert "autograder/rubric.py" in names and "autograder/rubric.toml" in names
    assert not any("__pycache__" in name or name.endswith(".pyc") for name in names)
    assert [relative for relative, _ in grader_files()] == sorted(names)


def test_it_changes_when_any_file_of_the_grader_changes(tmp_path):
    package, solutions = grader_copy(tmp_path)
    before = files_digest((package, solutions))
    (package / "checks" / "baseline.py").write_text("THRESHOLD = 0.7\n")
    assert files_digest((package, solutions)) == before  # read once per process: a grading sees one grader
    files_digest.cache_clear()
    assert files_digest((package, solutions)) != before


def test_it_changes_when_the_reference_changes_or_a_file_is_renamed_but_not_for_caches(tmp_path):
    package, solutions = grader_copy(tmp_path)
    before = files_digest((package, solutions))
    (package / "checks" / "__pycache__").mkdir()
    (package / "checks" / "__pycache__" / "baseline.cpython-311.pyc").write_bytes(b"\0cache")
    files_digest.cache_clear()
    assert files_digest((package, solutions)) == before
    (solutions / "baseline.py").rename(solutions / "other.py")
    files_digest.cache_clear()
    renamed = files_digest((package, solutions))
    (solutions / "other.py").write_text("def fit(): return 1\n")
    files_digest.cache_clear()
    assert len({before, renamed, files_digest((package, solutions))}) == 3


def test_it_records_the_versions_of_python_torch_numpy_scikit_learn_and_pytest_from_their_metadata():
    found = versions()
    assert list(found) == ["python", *VERSIONED]
    assert found["python"] == platform.python_version()
    assert all(found[name] == importlib.metadata.version(name) for name in VERSIONED)


def test_it_changes_with_the_rubric_in_use_and_with_any_version(monkeypatch):
    text = rubric.load().text
    own = fingerprint.fingerprint(text)
    assert isinstance(own, Fingerprint) and len(own.digest) == 64 and own.short == own.digest[:12]
    assert fingerprint.fingerprint(text + "\n# a course section's copy\n").digest != own.digest
    fingerprint.fingerprint.cache_clear()
    monkeypatch.setattr(fingerprint, "versions", lambda: {**own.versions, "numpy": "0.0.1"})
    try:
        assert fingerprint.fingerprint(text).digest != own.digest
    finally:
        fingerprint.fingerprint.cache_clear()


def test_it_is_computed_once_per_process():
    text = rubric.load().text
    assert fingerprint.fingerprint(text) is fingerprint.fingerprint(text)


def test_results_json_carries_the_fingerprint_and_the_versions():
    selected = rubric.load()
    document = writers.gradescope(failed_grading(selected, "no exercises/ folder", 0.0))
    stamp = document["extra_data"]["fingerprint"]
    assert stamp == {"digest": fingerprint.fingerprint(selected.text).digest, "versions": versions()}
    assert recorded(document) == stamp["digest"]


def test_it_reads_back_only_a_digest_of_hex_digits():
    shown = "\x1b[31m" + "a" * 58
    for stamp in ({"digest": shown}, {"digest": 7}, "abc", None):
        assert recorded({"extra_data": {"fingerprint": stamp}}) == ""
    assert recorded({"extra_data": []}) == recorded([]) == ""

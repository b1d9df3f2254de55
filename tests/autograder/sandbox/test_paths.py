"""What the worker may see: the OS and the interpreter, the instructor's files cut out wherever they are."""

import sys
from pathlib import Path

from support import ROOT

from autograder.sandbox import paths


def test_it_grants_around_a_hidden_folder_entry_by_entry_and_lists_the_folders_on_the_way(tmp_path):
    site = tmp_path / "site-packages"
    for name in ("torch", "numpy", "solutions", "autograder"):
        (site / name).mkdir(parents=True)
        (site / name / "__init__.py").write_text("")
    (site / "six.py").write_text("")
    granted, listed = paths.around(tmp_path, [site / "solutions", site / "autograder"])
    assert sorted(granted) == [site / "numpy", site / "six.py", site / "torch"]
    assert listed == [tmp_path, site]


def test_it_grants_a_folder_whole_when_nothing_hidden_is_inside(tmp_path):
    assert paths.around(tmp_path, [ROOT]) == ([tmp_path], [])


def test_it_hides_this_checkout_the_packages_and_what_the_grader_marks_private(monkeypatch, tmp_path):
    monkeypatch.setenv(paths.PRIVATE_VARIABLE, str(tmp_path))
    hidden = paths.hidden_paths()
    assert hidden[0] == ROOT  # the checkout (autograder/ and solutions/ are inside it)
    assert tmp_path.resolve() in hidden


def test_it_keeps_the_interpreter_readable_even_inside_a_checkout(tmp_path):
    venv = tmp_path / "checkout" / ".venv"
    (venv / "lib").mkdir(parents=True)
    assert paths.around(venv, [tmp_path / "checkout"]) == ([venv], [])  # an ancestor hidden: not this


def test_it_finds_a_file_inside_each_hidden_path_for_the_probe_to_try():
    found = paths.evidence(paths.hidden_paths())
    assert found and all(Path(path).is_file() for path in found)
    assert any(Path(path).is_relative_to(ROOT) for path in found)


def test_it_lists_the_interpreters_own_folders():
    assert Path(sys.base_prefix).resolve() in paths.interpreter_paths()

"""What the worker may see: the OS and the interpreter, the instructor's files cut out wherever they are."""

import json
import os
import subprocess
import sys
from pathlib import Path

import deployed
import pytest
from support import ROOT

from autograder.locations import MEMO, MEMO_SUFFIX
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


def test_it_hides_the_memo_of_the_references_answers_and_offers_one_to_the_probe(monkeypatch, tmp_path):
    """In a venv the memo sits inside the interpreter's folder, which the worker may read: it is cut out."""
    venv = tmp_path / "venv"
    kept = venv / MEMO
    kept.mkdir(parents=True)
    (kept / f"baseline.fit_baseline.0123{MEMO_SUFFIX}").write_bytes(b"an answer")
    monkeypatch.setattr(paths, "memo_folder", lambda: kept)
    hidden = paths.hidden_paths()
    assert kept in hidden and str(kept / f"baseline.fit_baseline.0123{MEMO_SUFFIX}") in paths.evidence(hidden)
    (venv / "lib").mkdir()
    granted, _ = paths.around(venv, hidden)
    assert granted == [venv / "lib"]


def test_it_hides_the_memo_before_it_exists_so_that_no_grant_drawn_earlier_opens_it(monkeypatch, tmp_path):
    """A grant drawn before the first grading made the memo (a long-lived process caches its grants)."""
    venv = tmp_path / "venv"
    (venv / "lib").mkdir(parents=True)
    monkeypatch.setattr(paths, "memo_folder", lambda: venv / MEMO)
    granted, _ = paths.around(venv, paths.hidden_paths())
    (venv / MEMO).mkdir()
    assert granted == [venv / "lib"]  # the venv entry by entry: the memo made after is in no grant


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


def test_it_leaves_out_an_interpreter_folder_this_user_cannot_reach_rather_than_failing(monkeypatch):
    """As an unprivileged grader whose interpreter lives in a private home: no PermissionError, no traceback."""
    private = Path(sys.base_prefix) / "include"
    real_exists = Path.exists

    def exists(path: Path) -> bool:
        if path.is_relative_to(private):
            raise PermissionError(13, "Permission denied", str(path))
        return real_exists(path)

    monkeypatch.setattr(Path, "exists", exists)
    found = paths.interpreter_paths()
    assert Path(sys.base_prefix).resolve() in found
    assert not [path for path in found if path.is_relative_to(private.resolve())]


def venv_like(folder: Path) -> tuple[Path, list[Path]]:
    """A venv's layout: lib/python3.11/site-packages with torch and the instructor's packages, lib64 -> lib."""
    site = folder / "venv" / "lib" / "python3.11" / "site-packages"
    for name in ("torch", "solutions", "autograder"):
        (site / name).mkdir(parents=True)
        (site / name / "__init__.py").write_text("")
    (folder / "venv" / "bin").mkdir()
    (folder / "venv" / "lib64").symlink_to("lib")  # as `python -m venv` makes it on 64-bit Linux
    return site, [site / "solutions", site / "autograder"]


def test_it_never_grants_a_venvs_lib64_link_which_would_open_all_of_lib(tmp_path):
    site, hidden = venv_like(tmp_path)
    granted, _ = paths.around(tmp_path / "venv", hidden)
    assert tmp_path / "venv" / "lib64" not in granted
    assert sorted(granted) == [tmp_path / "venv" / "bin", site / "torch"]
    assert paths.unsafe(granted, hidden) == []


def test_it_grants_no_link_planted_in_a_granted_folder_whether_it_points_into_solutions_or_a_checkout(tmp_path):
    site, hidden = venv_like(tmp_path)
    checkout = tmp_path / "checkout"
    (checkout / "solutions").mkdir(parents=True)
    (site / "answers").symlink_to(site / "solutions")  # beside the packages, into the hidden one
    (site / "course").symlink_to(checkout)  # into the instructor's checkout
    (site / "torch" / "reference").symlink_to(site / "solutions")  # deeper, inside a folder granted whole
    granted, _ = paths.around(tmp_path / "venv", [*hidden, checkout])
    assert not [path for path in granted if path.is_symlink()]
    assert paths.unsafe(granted, [*hidden, checkout]) == []  # torch/ holds a link, but a rule covers real paths


def test_it_finds_a_grant_through_a_link_or_holding_a_hidden_path_before_any_layer_applies_it(tmp_path):
    site, hidden = venv_like(tmp_path)
    lib64 = tmp_path / "venv" / "lib64"
    problems = paths.unsafe([site / "torch", lib64, site.parent], hidden)
    assert f"{lib64} is a symbolic link (to {(tmp_path / 'venv' / 'lib').resolve()})" in problems
    assert f"{lib64} would open {hidden[0]}" in problems
    assert f"{site.parent} would open {hidden[1]}" in problems
    assert not [problem for problem in problems if problem.startswith(str(site / "torch"))]


def test_it_grants_and_binds_real_paths_only_and_recreates_the_links_on_the_way_as_links(monkeypatch, tmp_path):
    assert all(Path(os.path.realpath(root)) == root for root in paths.roots())
    for link, target in paths.links().items():  # /lib -> usr/lib on a merged /usr
        assert link.is_symlink() and os.readlink(link) == target and link not in paths.roots()
    # a venv made with a `python` that is itself a link outside every bound folder (setup-python's, a shim)
    (tmp_path / "shim").mkdir()
    (tmp_path / "shim" / "python").symlink_to(os.path.realpath(sys.executable))
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    (tmp_path / "venv" / "bin" / "python").symlink_to(tmp_path / "shim" / "python")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "venv" / "bin" / "python"))
    found = paths.links()
    assert found[tmp_path.resolve() / "venv" / "bin" / "python"] == str(tmp_path / "shim" / "python")
    assert found[tmp_path.resolve() / "shim" / "python"] == os.path.realpath(sys.executable)


MEASURE = """
import json, os
from autograder.locations import MEMO, MEMO_SUFFIX
from autograder.sandbox import paths
hidden = paths.hidden_paths()
granted, listed = paths.readable(hidden)
print(json.dumps({
    "hidden": [str(path) for path in hidden],
    "links": [str(path) for path in granted if os.path.islink(path)],
    "unsafe": paths.unsafe(granted, hidden),
}))
"""


@pytest.mark.deployed
def test_the_deployed_grader_grants_no_link_and_nothing_that_holds_its_own_packages(tmp_path):
    """The issue's measure, in the venv the roster job installs the grader into (non-editable)."""
    done = subprocess.run(
        [str(deployed.python()), "-I", "-c", MEASURE], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    found = json.loads(done.stdout or "{}")
    site = deployed.venv() / "lib" / "python3.11" / "site-packages"
    assert {str(site / "autograder"), str(site / "solutions")} <= set(found.get("hidden", [])), done.stderr
    assert found["links"] == [] and found["unsafe"] == []


def test_a_venv_made_with_the_system_site_packages_gives_the_worker_its_base_site_packages_too(tmp_path):
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(tmp_path)], check=True)
    shown = (
        "import json, numpy, sysconfig\n"
        "from autograder.sandbox import paths\n"
        "print(json.dumps([paths.site_directories(), numpy.__file__, sysconfig.get_paths()['purelib']]))"
    )
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([tmp_path / "bin" / "python", "-c", shown], env=environment, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    sites, numpy, own = json.loads(done.stdout)
    assert own in sites  # the venv's own first
    assert any(Path(numpy).is_relative_to(site) for site in sites), (numpy, sites)  # numpy only in the base

"""The public tests' recordings kept by content (`recordings`): keyed on everything that can change them, read back
only when whole and their own."""

import importlib.metadata
import os
import shutil
import sys
from pathlib import Path

import pytest

from autograder import locations
from autograder.locations import SOLUTIONS
from autograder.release import recordings

MODULE = "test_padding.py"
RECORDS = {"test_padding::test_a": {"function": "padding.gather_final", "variants": {"G1": {"calls": [1.5, "nan"]}}}}
ENVIRONMENT = {"PATH": "/usr/bin", "HOME": "/home/someone"}


def entry(seconds: float = 2.5) -> recordings.Entry:
    return recordings.Entry(RECORDS, 3, seconds)


def stored(folder: Path, key: str = "a" * 64) -> Path:
    recordings.store(folder, MODULE, key, entry())
    return folder / f"test_padding-{key}.rec"


def child_folder(root: Path) -> Path:
    """A recording child's folder, as public_mistakes lays it out."""
    (root / "exercises" / "tests").mkdir(parents=True)
    (root / "exercises" / "tests" / "conftest.py").write_text("SEED = 0\n")
    (root / "exercises" / "tests" / MODULE).write_text("def test_a():\n    pass\n")
    (root / "exercises" / "padding.py").write_text("def gather_final(output, lengths):\n    ...\n")
    return root


def test_it_reads_back_what_it_kept_in_the_same_order(tmp_path):
    stored(tmp_path)
    assert recordings.load(tmp_path, MODULE, "a" * 64) == entry()
    assert list(recordings.load(tmp_path, MODULE, "a" * 64).records) == list(RECORDS)


def test_it_holds_nothing_under_a_key_it_never_kept(tmp_path):
    stored(tmp_path)
    assert recordings.load(tmp_path, MODULE, "b" * 64) is None
    assert recordings.load(tmp_path, "test_recurrence.py", "a" * 64) is None


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[:-7],  # cut short
        lambda data: data[:-30] + bytes([data[-30] ^ 1]) + data[-29:],  # one bit of the records flipped
        lambda data: b"not a header\n" + data.partition(b"\n")[2],
        lambda data: data.replace(b'"module": "test_padding.py"', b'"module": "test_recurrence.py"'),
        lambda data: data.replace(b'"format": 1', b'"format": 0'),
        lambda data: b"",
    ],
)
def test_it_never_trusts_an_entry_that_is_not_whole_or_not_its_own(tmp_path, damage):
    path = stored(tmp_path)
    path.write_bytes(damage(path.read_bytes()))
    assert recordings.load(tmp_path, MODULE, "a" * 64) is None


def test_an_entry_under_another_keys_name_is_not_read_as_that_key(tmp_path):
    path = stored(tmp_path)
    path.rename(tmp_path / f"test_padding-{'b' * 64}.rec")
    assert recordings.load(tmp_path, MODULE, "b" * 64) is None


def test_it_writes_an_entry_whole_leaving_no_temporary_file(tmp_path):
    stored(tmp_path)
    assert [path.name for path in tmp_path.iterdir()] == [f"test_padding-{'a' * 64}.rec"]


def test_where_the_folder_cannot_be_written_it_keeps_nothing_and_says_nothing(tmp_path):
    (tmp_path / "a file").write_text("")
    recordings.store(tmp_path / "a file" / "cache", MODULE, "a" * 64, entry())
    assert recordings.load(tmp_path / "a file" / "cache", MODULE, "a" * 64) is None


def test_it_keeps_each_modules_entries_used_last(tmp_path):
    keys = [f"{number:x}" * 64 for number in range(recordings.KEEP + 2)]
    for age, key in enumerate(keys):
        path = stored(tmp_path, key)
        os.utime(path, (1000 + age, 1000 + age))
    recordings.store(tmp_path, "test_recurrence.py", "f" * 64, entry())  # another module's: not counted
    assert recordings.load(tmp_path, MODULE, keys[1]) is None  # gone: among the oldest
    kept = sorted(path.name for path in tmp_path.glob("test_padding-*"))
    assert kept == sorted(f"test_padding-{key}.rec" for key in keys[-recordings.KEEP :])
    assert (tmp_path / f"test_recurrence-{'f' * 64}.rec").exists()


def test_it_knows_how_long_a_modules_last_recording_took_and_how_many_tests_it_ran(tmp_path):
    assert recordings.last_run(tmp_path, MODULE) is None
    recordings.store(tmp_path, MODULE, "a" * 64, entry(seconds=7.25))
    assert recordings.last_run(tmp_path, MODULE) == recordings.Run(7.25, 3)


def test_the_key_changes_with_any_file_of_the_childs_folder(tmp_path):
    folder = child_folder(tmp_path / "child")
    shared = recordings.common(ENVIRONMENT)
    before = recordings.key(folder, shared)
    assert recordings.key(folder, shared) == before
    files = sorted(path for path in folder.rglob("*") if path.is_file())
    keys = {before}
    for path in files:  # each file edited in turn, then put back
        data = path.read_bytes()
        path.write_bytes(data + b"\n")
        keys.add(recordings.key(folder, shared))
        path.write_bytes(data)
    (folder / "exercises" / "tests" / "helpers.py").write_text("")
    keys.add(recordings.key(folder, shared))
    assert len(keys) == 1 + len(files) + 1


def test_what_every_module_shares_changes_with_the_graders_own_files(tmp_path, monkeypatch):
    solutions = tmp_path / "solutions"
    shutil.copytree(SOLUTIONS, solutions, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(recordings, "SOLUTIONS", solutions)
    before = recordings.common(ENVIRONMENT)
    with (solutions / "padding.py").open("a") as edited:
        edited.write("\n")
    assert recordings.common(ENVIRONMENT) != before


@pytest.mark.parametrize(
    "variable", ["PYTHONHASHSEED", "PYTHONOPTIMIZE", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "TORCH_HOME", "LD_PRELOAD"]
)
def test_what_every_module_shares_changes_with_a_variable_that_reaches_python_or_torch(variable):
    assert recordings.common({**ENVIRONMENT, variable: "1"}) != recordings.common(ENVIRONMENT)


@pytest.mark.parametrize("variable", [locations.RECORDINGS_VARIABLE, "PYTHONPATH", "TERM", "SSH_CONNECTION"])
def test_what_every_module_shares_does_not_change_with_where_the_cache_is_or_the_shell(variable):
    assert recordings.common({**ENVIRONMENT, variable: "/somewhere"}) == recordings.common(ENVIRONMENT)


def test_what_every_module_shares_changes_with_pythons_version_and_every_librarys(monkeypatch):
    before = recordings.common(ENVIRONMENT)
    assert f"torch=={importlib.metadata.version('torch')}@" in "\n".join(recordings._installed())
    monkeypatch.setattr(sys, "version", sys.version + " (another build)")
    assert recordings.common(ENVIRONMENT) != before
    monkeypatch.undo()
    monkeypatch.setattr(recordings, "_installed", lambda: ["torch==0.1"])
    assert recordings.common(ENVIRONMENT) != before


def test_the_cache_is_in_the_users_cache_folder_unless_a_variable_names_another(tmp_path, monkeypatch):
    monkeypatch.delenv(locations.RECORDINGS_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert locations.recordings_folder() == tmp_path / "xdg" / locations.RECORDINGS
    monkeypatch.setenv(locations.RECORDINGS_VARIABLE, str(tmp_path / "elsewhere"))
    assert locations.recordings_folder() == tmp_path / "elsewhere"

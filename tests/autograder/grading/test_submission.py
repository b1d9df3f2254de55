"""A submission read as data: no link followed anywhere on the way, every size and count bounded first."""

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import hostile
import pytest
from support import SOLUTIONS, build_submission

from autograder.grading import submission as reading
from autograder.grading.submission import LeftOut, Module, Submission, SubmissionError, Why
from autograder.release import student_repository


@pytest.fixture
def secret(tmp_path: Path) -> bytes:
    """A file only root may read, as the instructor's files are to the worker."""
    token = secrets.token_hex(16).encode()
    (tmp_path / "secret").write_bytes(token)
    (tmp_path / "secret").chmod(0o600)
    return token


def read(fork: Path, package: str = "exercises") -> dict[str, Module | LeftOut]:
    return {
        (item.name if isinstance(item, Module) else item.path): item
        for item in reading.modules(Submission(fork, package))
    }


def test_it_reads_regular_modules_and_no_link_special_file_or_oversized_module(tmp_path, secret):
    fork = build_submission(tmp_path / "fork")
    package = fork / "exercises"
    (package / "recurrence.py").unlink()
    (package / "recurrence.py").symlink_to(SOLUTIONS / "recurrence.py")
    (package / "notes.py").symlink_to(tmp_path / "secret")
    os.mkfifo(package / "fifo.py")  # opening it to read would block a grader that did not check first
    with open(package / "baseline.py", "r+b") as module:
        module.truncate(reading.MAX_MODULE_BYTES + 1)
    (package / "conftest.py").write_text("import pytest\n")
    (package / "not-a-name.py").write_text("x = 1\n")
    found = read(fork)
    assert (found["padding.py"].data, found["data.py"].data) == (
        (SOLUTIONS / "padding.py").read_bytes(),
        (SOLUTIONS / "data.py").read_bytes(),
    )
    whys = {path: item.why for path, item in found.items() if isinstance(item, LeftOut)}
    assert whys == {
        "exercises/recurrence.py": Why.LINK,
        "exercises/notes.py": Why.LINK,
        "exercises/fifo.py": Why.SPECIAL,
        "exercises/baseline.py": Why.TOO_BIG,
        "exercises/conftest.py": Why.SHADOWS,
        "exercises/not-a-name.py": Why.NOT_A_NAME,
    }
    assert found["exercises/baseline.py"].size == reading.MAX_MODULE_BYTES + 1
    assert not any(secret in item.data for item in found.values() if isinstance(item, Module))


def test_it_follows_no_linked_folder_on_the_way_to_the_package(tmp_path):
    build_submission(tmp_path / "elsewhere")
    (tmp_path / "fork").mkdir()
    (tmp_path / "fork" / "exercises").symlink_to(tmp_path / "elsewhere" / "exercises")
    with pytest.raises(SubmissionError, match="exercises is a symbolic link"):
        read(tmp_path / "fork")
    (tmp_path / "upload").mkdir()
    (tmp_path / "upload" / "week07-main").symlink_to(tmp_path / "elsewhere")  # a link above the package
    with pytest.raises(SubmissionError, match="lies behind a link"):
        read(tmp_path / "upload", "week07-main/exercises")


def test_it_copies_no_more_modules_than_its_bound(tmp_path):
    package = tmp_path / "fork" / "exercises"
    package.mkdir(parents=True)
    for number in range(reading.MAX_MODULES + 20):
        (package / f"m{number:04}.py").write_text(f"N = {number}\n")
    left_out = reading.copy_modules(Submission(tmp_path / "fork"), tmp_path / "copy")
    assert len(list((tmp_path / "copy").iterdir())) == reading.MAX_MODULES
    assert [entry.why for entry in left_out] == [Why.TOO_MANY] * 20


@pytest.fixture
def deep_fork(tmp_path: Path) -> Iterator[Path]:
    fork = build_submission(tmp_path / "fork")
    hostile.plant(fork)
    yield fork
    hostile.remove(fork)


def test_it_lists_a_tree_deeper_than_the_recursion_limit_and_stops_at_its_depth(deep_fork):
    found = reading.listing(Submission(deep_fork))
    deep = [entry for entry in found.entries if entry.why is Why.TOO_DEEP]
    assert [entry.path for entry in deep] == ["d/" * (reading.MAX_DEPTH + 1)]
    assert not any(entry.path.endswith("leaf.txt") for entry in found.entries)
    assert {os.fsdecode(name) for name in hostile.NAMES.values()} <= {entry.path for entry in found.entries}
    assert not any(entry.path.startswith("exercises/") for entry in found.entries), "modules speak for themselves"


def test_it_looks_at_no_more_entries_than_its_bound(tmp_path):
    crowd = tmp_path / "fork" / "crowd"
    crowd.mkdir(parents=True)
    for number in range(reading.MAX_ENTRIES + 10):
        (crowd / f"f{number}").touch()
    found = reading.listing(Submission(tmp_path / "fork"))
    assert found.cut and len(found.entries) == reading.MAX_LISTED
    assert found.more == reading.MAX_ENTRIES - 1 - reading.MAX_LISTED  # the crowd folder spent one entry


def test_it_lists_a_link_as_a_link_and_never_looks_behind_it(tmp_path):
    fork = build_submission(tmp_path / "fork")
    (fork / "data").symlink_to("/etc")
    (fork / "README.md").symlink_to("/etc/shadow")
    found = {entry.path: entry.why for entry in reading.listing(Submission(fork)).entries}
    assert found == {"README.md": Why.LINK, "data": Why.LINK}


def test_it_removes_a_tree_however_deep_without_following_a_link_out_of_it(tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "kept.txt").write_text("not the student's\n")
    fork = tmp_path / "fork"
    fork.mkdir()
    hostile.plant(fork)
    (fork / "out").symlink_to(tmp_path / "outside")
    (fork / "locked" / "inner").mkdir(parents=True)
    (fork / "locked").chmod(0)  # what a student's code may leave
    reading.remove_tree(fork)
    assert not fork.exists() and (tmp_path / "outside" / "kept.txt").exists()


def test_it_only_counts_the_releases_own_files_and_never_walks_a_tool_folder(tmp_path):
    fork = build_submission(tmp_path / "fork")
    shipped = student_repository.shipped()  # the release's own manifest, not a list of ours
    for path in shipped:
        (fork / path).parent.mkdir(parents=True, exist_ok=True)
        (fork / path).write_text("as released\n")
    venv = fork / ".venv" / "lib"
    venv.mkdir(parents=True)
    for number in range(reading.MAX_ENTRIES + 10):  # walked, it would spend the whole budget
        (venv / f"f{number}").touch()
    (fork / ".venv" / "bin").mkdir()
    (fork / ".venv" / "bin" / "python").symlink_to("/usr/bin/python3")
    for tool in (".git", "exercises/__pycache__", "exercises/.ipynb_checkpoints", ".pytest_cache"):
        (fork / tool).mkdir(parents=True, exist_ok=True)
        (fork / tool / "inside").touch()
    (fork / "notes.md").write_text("my answers are in exercises/\n")
    (fork / "exercises" / "helpers").mkdir()
    (fork / "exercises" / "helpers" / "extra.py").write_text("x = 1\n")
    found = reading.listing(Submission(fork), shipped)
    assert {entry.path: entry.why for entry in found.entries} == {
        "exercises/helpers/extra.py": Why.NOT_GRADED,
        "notes.md": Why.NOT_GRADED,
    }
    assert not found.cut and found.more == 0
    graded = {path for path in shipped if Submission(fork).module_of(path) is not None}
    assert found.unlisted.shipped == len(shipped - graded)
    tools = {".venv": 1, ".git": 1, "__pycache__": 1, ".ipynb_checkpoints": 1, ".pytest_cache": 1}
    assert found.unlisted.tools == tools


def test_it_still_names_a_release_file_that_is_a_link(tmp_path):
    fork = build_submission(tmp_path / "fork")
    (fork / "README.md").symlink_to("/etc/passwd")
    found = reading.listing(Submission(fork), student_repository.shipped())
    assert [(entry.path, entry.why) for entry in found.entries] == [("README.md", Why.LINK)]


def test_it_counts_the_releases_files_of_an_upload_whose_fork_sits_in_a_folder(tmp_path):
    fork = build_submission(tmp_path / "upload" / "week07-main")
    (fork / "README.md").write_text("as released\n")
    (fork / "answers.txt").write_text("mine\n")
    found = reading.listing(Submission(tmp_path / "upload", "week07-main/exercises"), student_repository.shipped())
    assert [entry.path for entry in found.entries] == ["week07-main/answers.txt"] and found.unlisted.shipped == 1

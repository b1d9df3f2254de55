"""`autograde gradescope OUT.zip`: a bundle whose run_autograder grades a fake /autograder layout."""

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest
from support import EXERCISES, SOLUTIONS, build_submission

from autograder import cli, gradescope, rubric
from autograder.gradescope_run import find_submission
from autograder.submission import Submission

SCHEMA = json.loads((Path(__file__).parent / "gradescope_results.schema.json").read_text())


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "autograder.zip"
    assert cli.main(["gradescope", str(out)]) == 0
    return out


def autograder_root(bundle: Path, folder: Path, submission: Path | None) -> Path:
    """Gradescope's layout: the zip unpacked in source/, run_autograder copied beside it, the submission."""
    root = folder / "autograder"
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(root / "source")
    for name in ("run_autograder", "setup.sh"):
        (root / "source" / name).chmod(0o755)  # extractall does not restore modes; Gradescope's unzip does
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    if submission is not None:
        shutil.copytree(submission, root / "submission")
    (root / "results").mkdir()
    return root


def run_autograder(root: Path) -> tuple[subprocess.CompletedProcess, dict]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(AUTOGRADER_ROOT=str(root), AUTOGRADER_PYTHON=sys.executable)  # setup.sh's venv skipped
    done = subprocess.run(
        [str(root / "run_autograder")], cwd=root, env=env, capture_output=True, text=True, timeout=600
    )
    document = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(document, SCHEMA)
    return done, document


def test_it_puts_setup_and_run_autograder_at_the_root_executable(bundle):
    with zipfile.ZipFile(bundle) as archive:
        modes = {info.filename: info.external_attr >> 16 for info in archive.infolist()}
        setup = archive.read("setup.sh").decode()
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    assert "torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in setup
    assert 'pip install "$ROOT/source/grader"' in setup


def test_it_carries_the_grader_its_reference_and_rubric_but_no_caches_or_project_tests(bundle):
    with zipfile.ZipFile(bundle) as archive:
        names = set(archive.namelist())
    for needed in ("grader/pyproject.toml", "grader/autograder/rubric.toml", "grader/autograder/suites/pytest.ini"):
        assert needed in names
    assert {f"grader/solutions/{path.name}" for path in SOLUTIONS.glob("*.py")} <= names
    assert {
        f"grader/autograder/runtime/{p.name}" for p in (Path(gradescope.__file__).parent / "runtime").glob("*.py")
    } <= names
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]
    assert not [name for name in names if name.startswith(("grader/tests/", "grader/.git"))]


def test_it_finds_the_exercises_folder_however_the_student_uploaded(tmp_path):
    top = build_submission(tmp_path / "top")
    assert find_submission(top, tmp_path / "s1") == Submission(top)
    (tmp_path / "zipped").mkdir()
    build_submission(tmp_path / "zipped" / "week07-main")
    assert find_submission(tmp_path / "zipped", tmp_path / "s2") == Submission(
        tmp_path / "zipped", "week07-main/exercises"
    )
    loose = tmp_path / "loose"
    loose.mkdir()
    shutil.copyfile(SOLUTIONS / "padding.py", loose / "padding.py")
    assert find_submission(loose, tmp_path / "s3") == Submission(loose, ".")


def test_its_run_autograder_writes_results_even_for_an_empty_submission(bundle, tmp_path):
    root = autograder_root(bundle, tmp_path, None)
    (root / "submission").mkdir()
    done, document = run_autograder(root)
    assert done.returncode == 0, done.stderr
    assert document["score"] == 0 and "has no exercises/ folder" in document["output"]
    assert f"grader: {root / 'source' / 'grader' / 'autograder'}" in done.stdout  # the bundle's copy, not this repo


@pytest.mark.parametrize(
    ("base", "expected"),
    [pytest.param(SOLUTIONS, "full", marks=pytest.mark.slow, id="reference"), pytest.param(EXERCISES, 0, id="stubs")],
)
def test_its_run_autograder_scores_the_reference_full_and_the_stubs_zero(bundle, tmp_path, base, expected):
    root = autograder_root(bundle, tmp_path, build_submission(tmp_path / "upload", base))
    done, document = run_autograder(root)
    assert done.returncode == 0, done.stderr[-3000:]
    total = rubric.load().total
    assert document["score"] == (total if expected == "full" else 0), done.stdout[-3000:]
    assert document["extra_data"]["max_score"] == total

"""`autograde gradescope OUT.zip`: a bundle whose run_autograder grades a fake /autograder layout."""

import base64
import json
import os
import secrets
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest
from support import EXERCISES, SOLUTIONS, build_submission

from autograder import cli, rubric
from autograder.gradescope_run import find_submission
from autograder.grading import submission
from autograder.grading.submission import Submission, Why
from autograder.release import gradescope

SCHEMA = json.loads((Path(__file__).parents[1] / "gradescope_results.schema.json").read_text())


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
        f"grader/autograder/runtime/{p.name}"
        for p in (Path(gradescope.__file__).parent.parent / "runtime").glob("*.py")
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


LEAKING_BASELINE = '''
import base64
import pathlib


def bag_of_counts(tokens):
    """Reads what the other modules of the upload point at, and shows it (base64) in the feedback."""
    shown = []
    for name in ("notes.py", "secret.py", "recurrence.py"):
        try:
            data = pathlib.Path(__file__).with_name(name).read_bytes()
        except OSError as error:
            shown.append(f"{name}: {type(error).__name__}")
        else:
            shown.append(f"{name}: {data[:200]!r} {base64.b64encode(data).decode()}")
    print("\\n".join(shown))
    raise ValueError(" | ".join(shown))
'''


def secret_texts(path: Path) -> list[str]:
    """What of a file must not reach a report: each line of it, and its base64."""
    data = path.read_bytes()
    lines = [line for line in data.decode(errors="replace").splitlines() if len(line) >= 8]
    return [*lines, base64.b64encode(data).decode()[:40]]


def test_its_run_autograder_reads_no_link_of_a_loose_upload_and_nothing_of_their_targets_reaches_a_report(
    bundle, tmp_path
):
    """The issue's 1.7 KB zip of links scored 100/100, and a link to /etc/shadow became a readable copy."""
    upload = tmp_path / "upload"
    upload.mkdir()
    shutil.copyfile(SOLUTIONS / "padding.py", upload / "padding.py")  # the one module really uploaded
    (upload / "baseline.py").write_text(LEAKING_BASELINE)
    for module in ("recurrence", "initialisation", "language_model", "classifier", "data"):
        (upload / f"{module}.py").symlink_to(f"../source/grader/solutions/{module}.py")  # as the zip
    (upload / "notes.py").symlink_to("/etc/shadow")
    (tmp_path / "secret").write_text(f"instructor-only {secrets.token_hex(16)}\n")
    (tmp_path / "secret").chmod(0o600)
    (upload / "secret.py").symlink_to(tmp_path / "secret")
    root = autograder_root(bundle, tmp_path, None)
    shutil.copytree(upload, root / "submission", symlinks=True)  # as an unzip that restores links leaves it
    done, document = run_autograder(root)
    assert done.returncode == 0, done.stderr[-3000:]
    padding = rubric.load().select(["encode_packed", "gather_final", "masked_mean"]).total
    assert document["score"] == padding, [(t["name"], t["score"]) for t in document["tests"] if t["score"]]
    reasons = {entry["path"]: entry["why"] for entry in document["extra_data"]["left_out"]}
    linked = ["classifier.py", "data.py", "initialisation.py", "language_model.py", "notes.py", "recurrence.py"]
    assert reasons == dict.fromkeys([*linked, "secret.py"], "link")
    rnn = next(test for test in document["tests"] if test["name"].startswith("rnn_forward"))
    assert rnn["output"].startswith("recurrence.py was not read by the grader: it is a symbolic link")
    reports = [(root / "results" / "results.json").read_text(), (root / "results" / "summary.md").read_text()]
    reports.append(done.stdout + done.stderr)
    for text in [*secret_texts(Path("/etc/shadow")), *secret_texts(tmp_path / "secret"), "def rnn_forward"]:
        assert not any(text in report for report in reports), f"{text[:30]!r} reached a report"


def test_its_run_autograder_reads_a_bounded_number_of_loose_modules_each_within_the_size_limit(bundle, tmp_path):
    """The loose form copied every file (20,000 modules, a 300 MB one) before the 1 MB limit applied."""
    root = autograder_root(bundle, tmp_path, None)
    upload = root / "submission"
    upload.mkdir()
    shutil.copyfile(SOLUTIONS / "padding.py", upload / "padding.py")
    for number in range(20_000):
        (upload / f"helper_{number:05}.py").write_text(f"N = {number}\n")
    with open(upload / "baseline.py", "wb") as module:
        module.truncate(300 << 20)  # sparse: no disk is spent
    done, document = run_autograder(root)
    assert done.returncode == 0, done.stderr[-3000:]
    padding = rubric.load().select(["encode_packed", "gather_final", "masked_mean"]).total
    assert document["score"] == padding, "the week's modules are read first"
    bag = next(test for test in document["tests"] if test["name"].startswith("bag_of_counts"))
    assert bag["output"].startswith("baseline.py was not read by the grader: it is 300 MiB, over the 1 MiB limit")
    extra = document["extra_data"]
    whys = [entry["why"] for entry in extra["left_out"]]
    assert whys[0] == "too big" and set(whys[1:]) == {"too many"}
    assert len(extra["ignored_files"]) == submission.MAX_LISTED + 1 and extra["ignored_files"][-1] == "..."
    assert (root / "results" / "results.json").stat().st_size < 100_000


def zipped(path: Path, entries: list[tuple[str, bytes, int]]) -> Path:
    """A zip of (name, data, mode) entries, as a student's tools might write one (links included)."""
    with zipfile.ZipFile(path, "w") as archive:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = mode << 16
            archive.writestr(info, data)
    return path


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_it_unpacks_a_zip_left_as_uploaded_as_data(tmp_path):
    padding = (SOLUTIONS / "padding.py").read_bytes()
    upload = tmp_path / "upload"
    upload.mkdir()
    zipped(
        upload / "week07.zip",
        [
            ("week07-main/exercises/padding.py", padding, 0o100644),
            ("week07-main/exercises/recurrence.py", b"../../../source/grader/solutions/recurrence.py", 0o120777),
            ("week07-main/../../escaped.py", b"x = 1\n", 0o100644),
            ("/tmp/absolute.py", b"x = 1\n", 0o100644),
            ("week07-main/exercises/baseline.py", b"#" * (submission.MAX_MODULE_BYTES + 1), 0o100644),
            ("week07-main/exercises/padding.py", b"raise SystemExit\n", 0o100644),  # a second entry of one name
            ("week07-main/fifo.py", b"", 0o010644),
            ("week07-main/README.md", b"read me\n", 0o100644),
        ],
    )
    found = find_submission(upload, tmp_path / "staging")
    assert (found.root, found.package) == (tmp_path / "staging", "week07-main/exercises")
    whys = {entry.path: entry.why for entry in found.left_out}
    assert whys == {
        "week07-main/exercises/recurrence.py": Why.LINK,
        "week07-main/../../escaped.py": Why.UNSAFE_PATH,
        "/tmp/absolute.py": Why.UNSAFE_PATH,
        "week07-main/exercises/baseline.py": Why.TOO_BIG,
        "week07-main/exercises/padding.py": Why.DUPLICATE,
        "week07-main/fifo.py": Why.SPECIAL,
        "week07-main/README.md": Why.NOT_GRADED,
    }
    written = sorted(path.relative_to(tmp_path).as_posix() for path in tmp_path.rglob("*") if path.is_file())
    assert written == ["staging/week07-main/exercises/padding.py", "upload/week07.zip"]
    assert (tmp_path / "staging" / "week07-main" / "exercises" / "padding.py").read_bytes() == padding
    assert not Path("/tmp/absolute.py").exists()

"""`autograde gradescope OUT.zip`: the bundle, deployed as Gradescope deploys it, grades what it should.

The bundle is written by the deployed grader (installed, not editable); its own setup.sh builds the
image's venv (tests/helpers/deployed.py, once for every test process); its own run_autograder grades
each submission form as root without CAP_SYS_ADMIN and with user namespaces refused (Docker's
defaults, which Gradescope's containers have: tests/helpers/tiers.py).
"""

import json
import shutil
import subprocess
import tomllib
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attack_suite as suite
import deployed
import jsonschema
import pytest
import tiers
from support import EXERCISES, ROOT, SOLUTIONS, build_submission

from autograder import cli, gradescope, rubric
from autograder.gradescope_run import find_submission
from autograder.sandbox import record

SCHEMA = json.loads((Path(__file__).parent / "gradescope_results.schema.json").read_text())


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "autograder.zip"
    assert cli.main(["gradescope", str(out)]) == 0
    return out


def test_it_puts_setup_and_run_autograder_at_the_root_executable(bundle):
    with zipfile.ZipFile(bundle) as archive:
        modes = {info.filename: info.external_attr >> 16 for info in archive.infolist()}
        setup = archive.read("setup.sh").decode()
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    assert "https://download.pytorch.org/whl/cpu" in setup and "pip install torch==2.13.0" in setup
    assert 'pip install "$ROOT/source/grader"' in setup  # installed, not editable


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
    assert find_submission(top, tmp_path / "s1") == top
    (tmp_path / "zipped").mkdir()
    nested = build_submission(tmp_path / "zipped" / "week07-main")
    assert find_submission(tmp_path / "zipped", tmp_path / "s2") == nested
    loose = tmp_path / "loose"
    loose.mkdir()
    shutil.copyfile(SOLUTIONS / "padding.py", loose / "padding.py")
    staged = find_submission(loose, tmp_path / "s3")
    assert (staged / "exercises" / "padding.py").read_bytes() == (SOLUTIONS / "padding.py").read_bytes()


# -- the bundle as Gradescope deploys it: its own setup.sh, its own run_autograder, Docker's defaults ----------
FORMS = ("repository", "zip", "loose")  # uploaded from GitHub, as a zip of the repository folder, as loose modules
DOCKER = tiers.TIERS["docker"]  # root without CAP_SYS_ADMIN, user namespaces refused by seccomp: Gradescope's
ATTACKS = suite.GROUPS["values_and_cheats"]  # import_solutions and search_expected read the reference from disk
RUBRIC = rubric.load()


def place(submission: Path, target: Path, form: str) -> None:
    """The submission as Gradescope unpacks each form (regular files: nothing relies on its unzip's links)."""
    if form == "repository":
        shutil.copytree(submission, target)
    elif form == "zip":
        shutil.copytree(submission, target / "week07-main")
    else:
        target.mkdir()
        for module in sorted((submission / "exercises").glob("*.py")):
            shutil.copyfile(module, target / module.name)


def autograder_root(folder: Path, submission: Path | None, form: str = "repository") -> Path:
    """Gradescope's layout for one submission: the image's source/ and run_autograder, submission/, results/."""
    image = deployed.gradescope_image()
    root = tiers.work_folder(folder / "autograder", DOCKER)
    shutil.copytree(image / "source", root / "source", symlinks=True)
    shutil.copy2(image / "run_autograder", root / "run_autograder")
    if submission is not None:
        place(submission, root / "submission", form)
    (root / "results").mkdir()
    return root


def run_autograder(root: Path) -> tuple[subprocess.CompletedProcess, dict]:
    """The bundle's own run_autograder, as root in Docker's defaults, with the venv its setup.sh made."""
    python = deployed.gradescope_image() / "venv" / "bin" / "python"
    environment = {**tiers.environment(DOCKER, root.parent), "AUTOGRADER_ROOT": str(root)}
    environment["AUTOGRADER_PYTHON"] = str(python)  # the image's venv: root/ holds only this submission
    command = tiers.command(DOCKER, [str(root / "run_autograder")], root.parent)
    done = subprocess.run(command, cwd=root, env=environment, capture_output=True, text=True, timeout=900)
    document = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(document, SCHEMA)
    return done, document


@pytest.fixture(scope="module")
def gradings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """Every (base, form) grading through run_autograder, two at a time; the attacks' traces looked for after."""
    tiers.require()
    deployed.gradescope_image()  # built once, before the gradings start
    folder = tmp_path_factory.mktemp("gradescope")
    built = suite.build(ATTACKS, tiers.work_folder(folder / "attacks", DOCKER))
    bases = {
        "reference": build_submission(folder / "reference"),
        "stubs": build_submission(folder / "stubs", EXERCISES),
    }
    bases["attacks"] = built.submission
    cases = [(base, form) for base in bases for form in FORMS]
    with ThreadPoolExecutor(2) as pool:
        futures = {case: pool.submit(grade_one, bases[case[0]], folder / "-".join(case), case[1]) for case in cases}
        done = {case: future.result() for case, future in futures.items()}
    try:
        done["traces"] = attack_traces(built)
        yield done
    finally:
        built.server.close()
        suite.kill_all(built.tokens)
        for mark in built.marks.values():
            mark.unlink(missing_ok=True)


def grade_one(submission: Path, folder: Path, form: str) -> tuple[subprocess.CompletedProcess, dict]:
    return run_autograder(autograder_root(tiers.work_folder(folder, DOCKER), submission, form))


def attack_traces(built: suite.Built) -> list[str]:
    """What the attacks left outside their gradings: marks, processes, calls to the loopback server."""
    traces = [f"{name} wrote {mark}" for name, mark in built.marks.items() if mark.exists()]
    traces += [
        f"{name}: {len(pids)} process(es) outlived the grading" for name, pids in suite.survivors(built.tokens).items()
    ]
    return traces + [f"reached the test's loopback server: {line!r}" for line in built.server.heard]


def earned(document: dict) -> dict[str, float]:
    return {test["name"]: test["score"] for test in document["tests"]}


@pytest.mark.slow
@pytest.mark.parametrize("form", FORMS)
def test_its_own_scripts_grade_the_reference_full_under_dockers_defaults(gradings, form):
    done, document = gradings[("reference", form)]
    assert done.returncode == 0, done.stderr[-3000:]
    assert document["score"] == RUBRIC.total, document["output"][-3000:]
    isolation = record.from_dict(document["extra_data"]["isolation"])
    assert document["extra_data"]["isolation_required"] is True and isolation.missing() == []
    assert [name for name in record.LAYERS if isolation.layer(name).in_force] == ["uid", "landlock", "seccomp"]
    assert "grader-venv" not in done.stdout and "/venv/lib/python3.11/site-packages/autograder" in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("form", FORMS)
def test_its_own_scripts_grade_the_stubs_zero(gradings, form):
    done, document = gradings[("stubs", form)]
    assert done.returncode == 0, done.stderr[-3000:]
    assert document["score"] == 0 and document["extra_data"]["max_score"] == RUBRIC.total
    assert "isolation required" not in document["output"]  # graded, not refused


@pytest.mark.slow
@pytest.mark.parametrize("form", FORMS)
def test_its_own_scripts_give_the_file_reading_attacks_only_what_they_honestly_earn(gradings, form):
    done, document = gradings[("attacks", form)]
    assert done.returncode == 0, done.stderr[-3000:]
    graded = suite.Graded(results=json.dumps(document))
    for attack in suite.members(ATTACKS):
        assert suite.item_problems(graded, attack.expected, attack.feedback) == [], attack.name
    zero = {function for attack in suite.members(ATTACKS) for function, got in attack.expected.items() if got == "zero"}
    assert {"set_forget_bias", "sample"} <= zero  # import_solutions' and search_expected's targets
    honest = sum(item.points for item in RUBRIC.items if item.function not in zero)
    assert document["score"] == honest, document["output"][-2000:]
    assert gradings["traces"] == []


@pytest.mark.slow
def test_its_run_autograder_writes_results_even_for_an_empty_submission(tmp_path):
    tiers.require()
    root = autograder_root(tiers.work_folder(tmp_path / "work", DOCKER), None)
    (root / "submission").mkdir()
    done, document = run_autograder(root)
    assert done.returncode == 0, done.stderr
    assert document["score"] == 0 and "has no exercises/ folder" in document["output"]
    site = deployed.gradescope_image() / "venv" / "lib" / "python3.11" / "site-packages"
    assert f"grader: {site / 'autograder'}" in done.stdout  # setup.sh's installed copy, not this checkout


@pytest.mark.slow
def test_an_installed_grader_writes_the_same_bundle_as_this_checkout(tmp_path):
    """`autograde gradescope` from the deployed (non-editable) grader: no pyproject.toml of its own to copy."""
    gradescope.build(tmp_path / "checkout.zip")
    done = subprocess.run(
        [str(deployed.autograde()), "gradescope", str(tmp_path / "installed.zip")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(tmp_path / "checkout.zip") as ours, zipfile.ZipFile(tmp_path / "installed.zip") as theirs:
        assert ours.namelist() == theirs.namelist()
        assert [ours.read(name) for name in ours.namelist()] == [theirs.read(name) for name in theirs.namelist()]


def test_its_packaging_has_this_projects_runtime_requirements_and_no_extras(bundle):
    with zipfile.ZipFile(bundle) as archive:
        packaging = tomllib.loads(archive.read("grader/pyproject.toml").decode())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert packaging["project"]["dependencies"] == project["dependencies"]
    assert packaging["project"]["name"] == project["name"] and packaging["project"]["scripts"] == project["scripts"]

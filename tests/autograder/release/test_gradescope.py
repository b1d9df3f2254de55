"""`autograde gradescope OUT.zip`: the bundle, deployed as Gradescope deploys it, grades what it should.

The bundle is written by the deployed grader (installed, not editable); its own setup.sh builds the
image's venv (tests/helpers/deployed.py, once for every test process); its own run_autograder grades
each submission form as root without CAP_SYS_ADMIN and with user namespaces refused (Docker's
defaults, which Gradescope's containers have: tests/helpers/tiers.py).
"""

import base64
import json
import re
import secrets
import shutil
import subprocess
import tomllib
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attack_suite as suite
import deployed
import gradescope_schema
import pytest
import tiers
from support import EXERCISES, ROOT, SOLUTIONS, build_submission

from autograder import cli, rubric
from autograder.fingerprint import VERSIONED
from autograder.gradescope_run import find_submission
from autograder.grading import submission
from autograder.grading.submission import Submission, Why
from autograder.locations import LOCK, MEMO
from autograder.release import gradescope
from autograder.sandbox import record


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
    assert (
        "https://download.pytorch.org/whl/cpu" in setup and 'pip install --require-hashes --no-deps -r "$LOCK"' in setup
    )
    assert 'pip install --no-deps "$ROOT/source/grader"' in setup  # installed, not editable


def test_it_carries_the_grader_its_reference_and_rubric_but_no_caches_or_project_tests(bundle):
    with zipfile.ZipFile(bundle) as archive:
        names = set(archive.namelist())
    carried = ("grader/pyproject.toml", "grader/autograder/rubric.toml", "grader/autograder/suites/pytest.ini")
    for needed in (*carried, "grader/autograder/requirements.lock"):
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


# -- the bundle as Gradescope deploys it: its own setup.sh, its own run_autograder, Docker's defaults ----------
FORMS = ("repository", "zip", "loose")  # uploaded from GitHub, as a zip of the repository folder, as loose modules
# The reference is graded in every form: a correct upload earns every point however it came. Where the upload
# sits changes nothing of what the stubs earn or what the attacks reach (the grader's disk, the same in every
# form), so each of those is graded once, in a form of its own: every form grades more than one submission.
FORMS_OF = {"reference": FORMS, "stubs": ("loose",), "attacks": ("zip",)}
FORMS_OF |= {"sharing": ("repository",), "returned": ("loose",)}
DOCKER = tiers.TIERS["docker"]  # root without CAP_SYS_ADMIN, user namespaces refused by seccomp: Gradescope's
ATTACKS = suite.GROUPS["values_and_cheats"]  # import_solutions, search_expected, read_memo read the grader's disk
SHARING = suite.GROUPS["sharing"]  # System V IPC, a POSIX message queue, kernel keys: what outlives the worker
RETURNED = suite.GROUPS["returned_tensors"]  # tensors that claim more than they hold: read by the grader itself
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
    command = tiers.command(DOCKER, [str(root / "run_autograder")], root.parent, start=root)
    done = subprocess.run(command, cwd=root, env=environment, capture_output=True, text=True, timeout=900)
    assert (root / "results" / "results.json").exists(), f"no results.json: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    document = json.loads((root / "results" / "results.json").read_text())
    gradescope_schema.validate(document)
    return done, document


@pytest.fixture(scope="module")
def gradings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """Every (base, form) grading through run_autograder, two at a time; the attacks' traces looked for after."""
    tiers.require()
    deployed.gradescope_image()  # built once, before the gradings start
    folder = tmp_path_factory.mktemp("gradescope")
    built = suite.build(ATTACKS, tiers.work_folder(folder / "attacks", DOCKER))
    sharing = suite.build(SHARING, tiers.work_folder(folder / "sharing", DOCKER))
    returned = suite.build(RETURNED, tiers.work_folder(folder / "returned", DOCKER))
    bases = {
        "reference": build_submission(folder / "reference"),
        "stubs": build_submission(folder / "stubs", EXERCISES),
    }
    bases["attacks"], bases["sharing"], bases["returned"] = built.submission, sharing.submission, returned.submission
    cases = [(base, form) for base in bases for form in FORMS_OF[base]]
    with ThreadPoolExecutor(2) as pool:
        futures = {case: pool.submit(grade_one, bases[case[0]], folder / "-".join(case), case[1]) for case in cases}
        done = {case: future.result() for case, future in futures.items()}
    try:
        done["traces"] = attack_traces(built) + attack_traces(sharing) + attack_traces(returned)
        yield done
    finally:
        for one in (built, sharing, returned):
            one.server.close()
            suite.kill_all(one.tokens)
            for mark in one.marks.values():
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


@pytest.mark.deployed
@pytest.mark.parametrize("form", FORMS_OF["reference"])
def test_its_own_scripts_grade_the_reference_full_under_dockers_defaults(gradings, form):
    done, document = gradings[("reference", form)]
    assert done.returncode == 0, done.stderr[-3000:]
    assert document["score"] == RUBRIC.total, document["output"][-3000:]
    isolation = record.from_dict(document["extra_data"]["isolation"])
    assert document["extra_data"]["isolation_required"] is True and isolation.missing() == []
    assert [name for name in record.LAYERS if isolation.layer(name).in_force] == ["uid", "landlock", "seccomp"]
    assert "grader-venv" not in done.stdout and "/venv/lib/python3.11/site-packages/autograder" in done.stdout


@pytest.mark.deployed
@pytest.mark.parametrize("form", FORMS_OF["stubs"])
def test_its_own_scripts_grade_the_stubs_zero(gradings, form):
    done, document = gradings[("stubs", form)]
    assert done.returncode == 0, done.stderr[-3000:]
    assert document["score"] == 0 and document["extra_data"]["max_score"] == RUBRIC.total
    assert "isolation required" not in document["output"]  # graded, not refused
    assert len(document["tests"]) == len(RUBRIC.items)
    unfinished = [test["name"] for test in document["tests"] if "is not done yet" not in test["output"]]
    assert unfinished == [], f"found, but not as the stubs: {unfinished}"  # each item met its TODO's stub


def honestly_earned(done_and_document: tuple[subprocess.CompletedProcess, dict], group: suite.Group) -> dict:
    """The grading's results.json, once each attack of `group` was found to earn exactly its honest items (the
    other functions' items are the reference's, but for those that call an attacked function, which fail with it:
    fit_baseline counts with the student's bag_of_counts)."""
    done, document = done_and_document
    assert done.returncode == 0, done.stderr[-3000:]
    graded = suite.Graded(results=json.dumps(document))
    for attack in suite.members(group):
        assert suite.item_problems(graded, attack.expected, attack.feedback) == [], attack.name
    return document


@pytest.mark.deployed
@pytest.mark.parametrize("form", FORMS_OF["attacks"])
def test_its_own_scripts_give_the_file_reading_attacks_only_what_they_honestly_earn(gradings, form):
    document = honestly_earned(gradings[("attacks", form)], ATTACKS)
    zero = {function for attack in suite.members(ATTACKS) for function, got in attack.expected.items() if got == "zero"}
    assert {"set_forget_bias", "sample", "fit_baseline"} <= zero  # import_solutions', search_expected's, read_memo's
    kept = deployed.gradescope_image() / "venv" / MEMO
    assert sorted(kept.glob("baseline.fit_baseline.*")), "setup.sh kept no answer: read_memo would prove nothing"
    lost = {key for attack in suite.members(ATTACKS) for key, got in attack.expected.items() if got == "zero"}
    honest = sum(item.points for item in RUBRIC.items if not {item.function, item.name} & lost)  # a function or an item
    assert document["score"] == honest, document["output"][-2000:]
    assert gradings["traces"] == []


@pytest.mark.deployed
@pytest.mark.parametrize("form", FORMS_OF["sharing"])
def test_its_own_scripts_give_what_outlives_a_worker_nothing_and_leave_none_of_it(gradings, form):
    document = honestly_earned(gradings[("sharing", form)], SHARING)
    left = record.from_dict(document["extra_data"]["isolation"]).left_behind
    assert left is not None and {"ipc", "keys"} <= set(left.checked) and left.proven_none, left
    assert gradings["traces"] == []


@pytest.mark.deployed
@pytest.mark.parametrize("form", FORMS_OF["returned"])
def test_its_own_scripts_check_every_returned_tensor_before_computing_with_it(gradings, form):
    document = honestly_earned(gradings[("returned", form)], RETURNED)
    assert document["extra_data"]["grader_memory_bytes"] == RUBRIC.limits.grader_memory_bytes  # its own ceiling
    assert gradings["traces"] == []


@pytest.mark.deployed
def test_its_own_scripts_survive_a_submission_that_fills_the_disk_and_write_what_it_earns(tmp_path):
    tiers.require()
    deployed.gradescope_image()
    group = suite.GROUPS["disk"]  # disk_filler: masked_mean writes until its bound (the bundle's own, disk_mb)
    built = suite.build(group, tiers.work_folder(tmp_path / "attack", DOCKER))
    try:
        done, document = grade_one(built.submission, tmp_path / "grading", "repository")
        traces = attack_traces(built)
    finally:
        built.server.close()
        suite.kill_all(built.tokens)
    assert done.returncode == 0, done.stderr[-3000:]
    bound = f"more than {RUBRIC.limits.disk_bytes >> 20} MB"
    for test in document["tests"]:
        if test["name"].startswith("masked_mean"):
            assert test["score"] == 0 and bound in test["output"], test
        elif test["name"].startswith("gather_final"):
            assert test["score"] == test["max_score"], test  # the next call: a fresh worker and an empty scratch
    isolation = record.from_dict(document["extra_data"]["isolation"])
    assert isolation.missing() == [] and isolation.disk is not None, isolation
    assert traces == [], traces


@pytest.mark.deployed
def test_its_run_autograder_writes_results_even_for_an_empty_submission(tmp_path):
    tiers.require()
    root = autograder_root(tiers.work_folder(tmp_path / "work", DOCKER), None)
    (root / "submission").mkdir()
    done, document = run_autograder(root)
    assert done.returncode == 0, done.stderr
    assert document["score"] == 0 and "has no exercises/ folder" in document["output"]
    site = deployed.gradescope_image() / "venv" / "lib" / "python3.11" / "site-packages"
    assert f"grader: {site / 'autograder'}" in done.stdout  # setup.sh's installed copy, not this checkout
    versions = document["extra_data"]["fingerprint"]["versions"]  # what setup.sh installed: the lock's pins
    locked = {name: re.search(rf"^{name}==(\S+) ", LOCK.read_text(), re.MULTILINE) for name in VERSIONED}
    assert {name: versions[name] for name in VERSIONED} == {name: found[1] for name, found in locked.items()}
    assert versions["torch"].endswith("+cpu") and versions["python"].startswith("3.11.")


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


@pytest.mark.deployed
def test_its_run_autograder_reads_no_link_of_a_loose_upload_and_nothing_of_their_targets_reaches_a_report(tmp_path):
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
    tiers.require()
    root = autograder_root(tiers.work_folder(tmp_path / "work", DOCKER), None)
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


@pytest.mark.deployed
def test_its_run_autograder_reads_a_bounded_number_of_loose_modules_each_within_the_size_limit(tmp_path):
    """The loose form copied every file (20,000 modules, a 300 MB one) before the 1 MB limit applied."""
    tiers.require()
    root = autograder_root(tiers.work_folder(tmp_path / "work", DOCKER), None)
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


@pytest.mark.deployed
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

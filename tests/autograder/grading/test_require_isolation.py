"""--require-isolation: a grading that counts runs isolated or not at all, and says which.

`grade` requires it only when asked; `grade-all` and Gradescope's run_autograder always, unless
told --no-require-isolation, which every report then says on its first line.
"""

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import deployed
import pytest
import tiers
from support import SOLUTIONS, build_submission

from autograder import cli
from autograder.sandbox import Isolation, layers, namespaces, probe, uid
from autograder.sandbox.state import Layer

UNPROTECTED = Isolation(no_network=True, layers={"landlock": Layer.off("left out by the test")})
CANARY = "import os\nos.makedirs({folder!r}, exist_ok=True)\nopen(os.path.join({folder!r}, 'ran'), 'w').write('ran')\n"


@pytest.fixture
def unprotected(monkeypatch) -> Iterator[None]:
    """This process's gradings get no layer at all, as on a machine that allows none."""
    monkeypatch.setattr(probe, "found", lambda: (layers.Plan(), UNPROTECTED))
    yield


@pytest.fixture
def probed_afresh() -> Iterator[None]:
    probe.found.cache_clear()
    yield
    probe.found.cache_clear()


def canary_submission(folder: Path, ran: Path) -> Path:
    """The reference, whose padding module leaves a file at import: did any student code run?"""
    source = CANARY.format(folder=str(ran)) + (SOLUTIONS / "padding.py").read_text()
    return build_submission(folder, edits={"padding": source})


def test_grade_refuses_with_exit_2_and_the_reason_before_any_student_code_runs(unprotected, tmp_path, capsys):
    submission = canary_submission(tmp_path / "submission", tmp_path / "canary")
    code = cli.main(
        ["grade", str(submission), "--out", str(tmp_path / "out"), "--only", "gather_final", "--require-isolation"]
    )
    document, terminal = json.loads((tmp_path / "out" / "results.json").read_text()), capsys.readouterr().err
    assert code == 2 and document["score"] == 0
    for reason in ("the worker could read the instructor's files", "could outlive the grading", "sudo"):
        assert reason in document["output"] and reason in terminal
    assert document["extra_data"]["isolation_required"] is True
    assert document["extra_data"]["isolation"]["hidden_instructor_files"] is False
    assert not (tmp_path / "canary").exists()


def test_grade_all_requires_isolation_unless_told_not_to(unprotected, tmp_path, capsys):
    roster = tmp_path / "roster"
    for student in ("ada", "bob"):
        canary_submission(roster / student, tmp_path / "canary")
    assert cli.main(["grade-all", str(roster), "--out", str(tmp_path / "out"), "--only", "gather_final"]) == 2
    for student in ("ada", "bob"):
        document = json.loads((tmp_path / "out" / student / "results.json").read_text())
        assert document["score"] == 0 and "isolation required but not available" in document["output"]
    assert not (tmp_path / "out" / "gradebook.csv").exists() and not (tmp_path / "canary").exists()
    assert "--no-require-isolation grades anyway" in capsys.readouterr().err


@pytest.mark.gradings
def test_a_grading_that_opts_out_says_so_on_the_first_line_of_every_report(tmp_path, capsys):
    roster = tmp_path / "roster"
    build_submission(roster / "ada")
    arguments = ["grade-all", str(roster), "--out", str(tmp_path / "out"), "--only", "gather_final", "--jobs", "1"]
    assert cli.main([*arguments, "--no-require-isolation"]) == 0
    out = tmp_path / "out" / "ada"
    notice = "Graded with --no-require-isolation"
    assert json.loads((out / "results.json").read_text())["output"].startswith(notice)
    assert (out / "summary.md").read_text().startswith(f"**{notice}")
    assert (out / "grader.log").read_text().startswith(notice)  # the terminal table of that grading


@pytest.mark.gradings
@pytest.mark.skipif(not uid.has_capability(21), reason="namespaces as root need CAP_SYS_ADMIN")
def test_a_layer_that_fails_to_start_is_named_with_its_step_on_the_terminal_and_in_results(
    monkeypatch, probed_afresh, submission, tmp_path, capsys
):
    monkeypatch.setattr(namespaces, "UNSHARE", [*namespaces.UNSHARE, "--no-such-option"])
    arguments = ["grade", str(submission()), "--out", str(tmp_path), "--only", "gather_final", "--require-isolation"]
    assert cli.main(arguments) == 0  # Landlock, seccomp and a uid still hold here
    failure = "root namespaces: unshare: unrecognized option '--no-such-option'"
    assert f"isolation: failed to start: {failure}" in capsys.readouterr().err
    isolation = json.loads((tmp_path / "results.json").read_text())["extra_data"]["isolation"]
    failed = {entry["layer"]: entry["step"] for entry in isolation["failures"]}
    assert failed[namespaces.ROOT] == "unshare: unrecognized option '--no-such-option'", isolation["failures"]
    assert json.loads((tmp_path / "results.json").read_text())["score"] > 0


@pytest.mark.deployed  # the image the bundle's setup.sh builds
def test_gradescopes_run_autograder_requires_isolation(tmp_path):
    tiers.require()
    tier = tiers.TIERS["fallback"]
    image = deployed.gradescope_image()
    work = tiers.work_folder(tmp_path / "work", tier)
    root = tiers.work_folder(work / "autograder", tier)
    shutil.copytree(image / "source", root / "source")
    build_submission(root / "submission")
    tiers.work_folder(root / "results", tier)
    environment = {**tiers.environment(tier, work), "AUTOGRADER_ROOT": str(root)}
    environment["AUTOGRADER_PYTHON"] = str(image / "venv" / "bin" / "python")
    command = tiers.command(tier, [str(image / "run_autograder")], work)
    done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=300)
    document = json.loads((root / "results" / "results.json").read_text())
    assert done.returncode == 0, done.stderr  # Gradescope shows results.json, which says why
    assert document["score"] == 0 and "isolation required but not available" in document["output"]
    assert os.stat(root / "results" / "results.json").st_uid == tiers.USER_ID  # written in the tier

"""The grading environment's lock: every dependency of pyproject.toml pinned inside its range, every file hashed,
torch the CPU build; the roster workflow and Gradescope's setup.sh install from it with --require-hashes."""

import re
import tomllib

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from autograder.locations import LOCK, ROOT, TEMPLATES

PINNED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", re.MULTILINE)


def locked() -> dict[str, tuple[Version, list[str]]]:
    """The lock's entries: name -> (the version pinned, the sha256 hashes given)."""
    text = LOCK.read_text()
    starts = list(PINNED.finditer(text))
    found = {}
    for start, end in zip(starts, [*starts[1:], None], strict=True):
        block = text[start.start() : end.start() if end else len(text)]
        found[canonicalize_name(start[1])] = (Version(start[2]), re.findall(r"--hash=sha256:([0-9a-f]{64})", block))
    return found


def dependencies() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [Requirement(text) for text in project["dependencies"]]


def test_every_dependency_of_pyproject_is_pinned_inside_its_range():
    entries = locked()
    for requirement in dependencies():
        name = canonicalize_name(requirement.name)
        assert name in entries, f"{requirement} is not in the lock: update it (README, 'Updating the lock')"
        version = entries[name][0]
        assert requirement.specifier.contains(version, prereleases=True), f"{name}=={version} is outside {requirement}"


def test_every_package_of_the_lock_is_pinned_exactly_and_hashed():
    text = LOCK.read_text()
    requirements = [line for line in text.splitlines() if line and not line.startswith((" ", "#"))]
    entries = locked()
    assert len(requirements) == len(entries) >= len(dependencies())
    assert all(hashes for _, hashes in entries.values()), "pip's --require-hashes refuses an entry without a hash"
    assert not re.search(r"^\s*--(index-url|extra-index-url|find-links)", text, re.MULTILINE), "no machine's index"


def test_torch_is_the_cpu_build_of_the_version_pyproject_pins():
    torch = next(one for one in dependencies() if one.name == "torch")
    version, hashes = locked()["torch"]
    assert version.local == "cpu" and torch.specifier.contains(version) and hashes
    assert str(torch.specifier) == f"=={version.public}"  # pinned exactly in pyproject.toml too


def test_the_roster_workflow_installs_the_grading_environment_from_the_lock_with_hashes():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "grade-roster.yml").read_text())
    install = next(step["run"] for step in workflow["jobs"]["grade"]["steps"] if "pip install" in step.get("run", ""))
    lock = "-r grader/autograder/requirements.lock --extra-index-url https://download.pytorch.org/whl/cpu"
    assert f'"$VENV/bin/python" -m pip install --require-hashes --no-deps {lock}' in install
    assert '"$VENV/bin/python" -m pip install --no-deps ./grader' in install and "pip check" in install
    assert "torch==" not in install, "torch comes from the lock, with its hash"


def test_gradescopes_setup_installs_from_the_lock_the_bundle_carries():
    setup = (TEMPLATES / "gradescope-setup.sh").read_text()
    assert 'LOCK="$ROOT/source/grader/autograder/requirements.lock"' in setup
    assert 'pip install --require-hashes --no-deps -r "$LOCK"' in setup and "pip check" in setup
    assert 'pip install --no-deps "$ROOT/source/grader"' in setup and "torch==" not in setup
    assert "PYTHON=python3.11" in setup, "the lock is for CPython 3.11"

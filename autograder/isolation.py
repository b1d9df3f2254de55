"""OS-level isolation of the worker, where the machine allows it.

As root with util-linux's `unshare` and `setpriv`, the worker starts in its own
mount, network and PID namespaces and runs as an unprivileged user of its own:

* it sees a root filesystem of only the OS folders (/usr, /etc, ...), the
  interpreter with its libraries and its own sandbox: the instructor's files (this
  repository, any other copy of it on the machine, an installed `solutions` package,
  which is also covered) can be neither imported nor read;
* /tmp, /var/tmp and /dev/shm are private and vanish with the worker, so nothing it
  writes outside its sandbox outlives it;
* there is no network but a loopback that nothing listens on;
* killing it kills every process it started, even one that left its process group;
* a per-worker user makes the process-count limit (RLIMIT_NPROC) bite.

Elsewhere the worker still runs (isolated interpreter, clean environment, limits),
and `Isolation` records which of these were in force.
"""

import functools
import itertools
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import autograder
import solutions

FIRST_UID = 61000  # worker users: 61000, 61001, ...; no account needed
_uids = itertools.count()
PRIVATE = ("/tmp", "/var/tmp", "/dev/shm")
# the first process of the chain gets SIGKILL when the grading process dies (killed, say), and, with
# namespaces, the worker when that one dies (runtime/worker.py): no worker outlives its grading
DIE_WITH_GRADER = ["setpriv", "--pdeathsig", "KILL", "--"]
NAMESPACES = ["unshare", "--mount", "--net", "--pid", "--fork", "--kill-child", "--mount-proc", "--"]
# without namespaces, a shell stands between the grader and the worker, so os.getppid() is not the grader
FALLBACK = ["sh", "-c", 'unset PWD OLDPWD; "$@"; exit $?', "sh"]  # a command after it: sh must not exec


@dataclass(frozen=True)
class Isolation:
    """Which protections the worker runs under (written to results.json)."""

    interpreter: str = "python -I -S, clean environment"
    separate_user: bool = False
    no_network: bool = False
    hidden_instructor_files: bool = False
    private_tmp: bool = False
    own_pid_namespace: bool = False

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


FULL = Isolation(
    separate_user=True, no_network=True, hidden_instructor_files=True, private_tmp=True, own_pid_namespace=True
)


def hidden_paths() -> list[Path]:
    """The instructor's files: the repository, and the packages wherever they are installed."""
    packages = [Path(autograder.__file__).resolve().parent, Path(solutions.__file__).resolve().parent]
    repository = packages[0].parent
    found = [repository] if (repository / "solutions").is_dir() and (repository / "pyproject.toml").exists() else []
    return found + [path for path in packages if not any(path.is_relative_to(root) for root in found)]


def _needed_paths() -> list[Path]:
    """What the worker must still reach: the interpreter and its libraries."""
    import sysconfig

    paths = {Path(sys.base_prefix), Path(sys.prefix), Path(sys.executable).resolve().parent}
    paths |= {Path(path) for path in sysconfig.get_paths().values()}
    return sorted(path.resolve() for path in paths if path.exists())


SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc")  # what a Python process needs of the OS


def _script(sandbox: Path, uid: int, command: list[str]) -> str:
    """The shell steps run as root inside the new namespaces: build a root of only what the worker
    needs (the OS, the interpreter, its libraries, the sandbox), then enter it as the worker user."""
    q = shlex.quote
    lines = ["set -e", "mount --make-rprivate /", "root=$(mktemp -d /run/autograde-root.XXXXXX)"]
    lines.append('mount -t tmpfs -o mode=755 tmpfs "$root"')
    for path in [Path(p) for p in SYSTEM if os.path.lexists(p)] + _needed_paths():
        inside = f'"$root"{q(str(path))}'
        if path.is_symlink():
            lines.append(f"[ -e {inside} ] || ln -s {q(os.readlink(path))} {inside}")
        else:
            lines.append(f"[ -e {inside} ] || {{ mkdir -p {inside} && mount --rbind {q(str(path))} {inside}; }}")
    lines.append('mkdir -p "$root/dev" && mount --rbind /dev "$root/dev"')
    lines.append('mkdir -p "$root/proc" && mount -t proc proc "$root/proc"')
    for private in PRIVATE:
        lines.append(f'mkdir -p "$root"{private} && mount -t tmpfs -o mode=1777,size=256m tmpfs "$root"{private}')
    lines.append(f'mkdir -p "$root"{q(str(sandbox))} && mount --bind {q(str(sandbox))} "$root"{q(str(sandbox))}')
    for hidden in hidden_paths():  # an installed copy inside a bound library folder
        inside = f'"$root"{q(str(hidden))}'
        lines.append(f"[ ! -e {inside} ] || mount -t tmpfs -o mode=000,size=4k tmpfs {inside}")
    lines.append(f"{shutil.which('ip') or 'ip'} link set lo up 2>/dev/null || true")
    privileges = f"--reuid={uid} --regid={uid} --clear-groups --no-new-privs --inh-caps=-all --bounding-set=-all"
    inner = (
        f"cd {q(str(sandbox / 'scratch'))} 2>/dev/null || cd /; unset PWD OLDPWD; "
        f"exec setpriv {privileges} -- {' '.join(q(part) for part in command)}"
    )
    chroot = shutil.which("chroot") or "/usr/sbin/chroot"  # the worker's PATH has no sbin
    lines.append(f'exec {chroot} "$root" /bin/sh -c {q(inner)}')
    return "\n".join(lines)


def wrap(command: list[str], sandbox: Path) -> tuple[list[str], int | None]:
    """`command` inside the namespaces as a fresh user: (command, uid); (command behind a shell, None) without."""
    guard = DIE_WITH_GRADER if shutil.which("setpriv") else []
    if available() != FULL:
        return [*guard, *FALLBACK, *command], None
    uid = FIRST_UID + next(_uids) % 4000
    return [*guard, *NAMESPACES, "sh", "-c", _script(sandbox, uid, command)], uid


def hand_over(sandbox: Path, uid: int | None) -> None:
    """Let the worker user read its sandbox and write its scratch folder."""
    if uid is None:
        return
    for root, folders, files in os.walk(sandbox):
        for name in [*folders, *files]:
            os.chown(os.path.join(root, name), uid, uid, follow_symlinks=False)
    os.chown(sandbox, uid, uid)


@functools.cache
def available() -> Isolation:
    """What this machine allows, found by trying once (cached for the process)."""
    if os.geteuid() != 0 or not all(shutil.which(tool) for tool in ("unshare", "setpriv", "chroot")):
        return Isolation()
    probe = Path(tempfile.mkdtemp(prefix="autograde-probe-"))
    try:
        script = _script(probe, FIRST_UID, [sys.executable, "-I", "-S", "-c", "import os; print(os.getuid())"])
        command = [
            "unshare",
            "--mount",
            "--net",
            "--pid",
            "--fork",
            "--kill-child",
            "--mount-proc",
            "--",
            "sh",
            "-c",
            script,
        ]
        clean = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}  # as the worker gets it
        result = subprocess.run(command, capture_output=True, text=True, timeout=30, env=clean)
        return FULL if result.returncode == 0 and result.stdout.strip() == str(FIRST_UID) else Isolation()
    except (OSError, subprocess.SubprocessError):
        return Isolation()
    finally:
        shutil.rmtree(probe, ignore_errors=True)

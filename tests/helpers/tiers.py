"""The situations a grading runs in, produced on this machine from root: one `Tier` each.

    root            the grader as root with every capability (a grader's machine, `sudo`)
    docker          root without CAP_SYS_ADMIN, and user namespaces refused by seccomp:
                    Docker's defaults, so Gradescope's containers
    user namespace  an unprivileged user, user namespaces allowed (a laptop; a runner without AppArmor's limit)
    landlock        an unprivileged user, user namespaces refused: only Landlock (Ubuntu 24.04 runners)
    fallback        an unprivileged user without user namespaces and without Landlock (an old kernel)

Dropping privileges needs root: `command` wraps a command line so that it runs in a tier.
Every tier grades with the grader as deployed (tests/helpers/deployed.py: a copy installed
non-editable into a venv of Debian's world-readable python3), never with this checkout's editable
install, whose interpreter sits where only root can reach it (pyenv under /root, mode 700). The
unprivileged user is a bare uid (no account is needed, none is created). The tier's work folder
may lie where it cannot reach either (pytest's temporary folders, mode 700): the command runs in a
private mount namespace where each such folder is replaced by a view holding only the work folder,
bound from the real one. Nothing changes on the machine itself.
"""

import json
import os
import shlex
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

import deployed
import pytest
from support import SOLUTIONS

from autograder.sandbox import cgroup, landlock, namespaces, seccomp, uid

# The unprivileged tiers' user, one per xdist process (below the workers' 61000-64999): a uid's process
# ceiling (RLIMIT_NPROC) counts all its processes, so a fork bomb held in one test process's tier must
# not take the processes of a worker that another test process starts as the same uid.
USER_ID = 60990 + int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0) % 10
STAGE = Path("/dev/shm")  # where the view holds the real folders while it is built
NO_LANDLOCK = (("landlock_create_ruleset", 0, 38),)  # ENOSYS: as a kernel without Landlock answers
ENTER = """
import json, os, sys
import pytest

from autograder.sandbox import landlock, namespaces, seccomp, uid
spec = json.loads(sys.argv[1])
if spec["deny"]:
    seccomp.install(tuple(tuple(rule) for rule in spec["deny"]))
os.execvp(spec["argv"][0], spec["argv"])
"""


@dataclass(frozen=True)
class Tier:
    name: str
    unprivileged: bool = False  # run as USER_ID instead of root
    drop_sys_admin: bool = False  # CAP_SYS_ADMIN out of the bounding set
    user_namespaces: bool = True  # False: refused by a seccomp filter, as Docker's profile does
    landlock: bool = True  # False: the Landlock system calls answer ENOSYS
    cgroups_writable: bool = True  # False: the cgroup hierarchies read-only, as Docker mounts them

    def deny(self) -> list[tuple[str, int, int]]:
        return [*([] if self.user_namespaces else seccomp.NO_USER_NAMESPACES), *([] if self.landlock else NO_LANDLOCK)]


TIERS = {
    tier.name: tier
    for tier in [
        Tier("root"),
        Tier("docker", drop_sys_admin=True, user_namespaces=False, cgroups_writable=False),
        Tier("user namespace", unprivileged=True),
        Tier("landlock", unprivileged=True, user_namespaces=False),
        Tier("fallback", unprivileged=True, user_namespaces=False, landlock=False),
    ]
}


def here() -> Tier:
    """The tier this process itself is in."""
    if os.geteuid() == 0:
        return Tier("root", drop_sys_admin=not uid.has_capability(21))  # 21: CAP_SYS_ADMIN
    return Tier("this user", unprivileged=True)


@dataclass(frozen=True)
class Expected:
    """What a tier must give on this machine, by the facts of its kernel."""

    hidden: bool  # the instructor's files are out of the worker's reach
    network: bool  # no connection leaves the worker
    private_tmp: bool  # nothing the worker writes to /tmp lands in the machine's /tmp
    no_leftovers: bool  # no process the worker starts outlives the grading
    out_of_reach: bool  # no call on another process by its id passes (prlimit64, setpriority, ...)
    layers: tuple[str, ...]  # the layers (record.LAYERS) results.json names as in force
    failing: tuple[str, ...] = ()  # the layers the machine seems to allow that must fail to start
    namespaces: str = ""  # the kind in force (namespaces.ROOT or USER), "" for none
    abi: int = 0  # Landlock's ABI in force, 0 for none

    @property
    def refused(self) -> bool:
        """--require-isolation refuses: instructor files, the network, leftover processes or others exposed."""
        return not (self.hidden and self.network and self.no_leftovers and self.out_of_reach)


def expected(tier: Tier) -> Expected:
    """From the kernel's facts (Landlock's ABI, whether user namespaces are allowed), what `tier` gives."""
    version = landlock.abi() if tier.landlock else 0
    restricted = Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
    apparmor = restricted.exists() and restricted.read_text().strip() == "1"
    allowed = not namespaces.user_namespaces_allowed()  # by the kernel's settings, as the probe reads them
    user_namespaces = tier.user_namespaces and allowed and not apparmor
    root = not tier.unprivileged
    kind = namespaces.ROOT if root and not tier.drop_sys_admin else namespaces.USER if user_namespaces else ""
    tried_in_vain = allowed and not kind and not user_namespaces  # refused by seccomp or AppArmor
    filtered = seccomp.supported()
    layers = ["namespaces"] if kind else []
    layers += ["uid"] if root else []
    layers += ["landlock"] if version else []
    layers += ["seccomp"] if filtered else []
    groups = tier.cgroups_writable and cgroup.available(cgroup.find()).in_force  # as this process sees them
    layers += ["cgroup"] if root and groups else []
    return Expected(
        hidden=bool(kind) or version >= 1,
        network=bool(kind) or filtered,
        private_tmp=bool(kind) or version >= 1,
        no_leftovers=bool(kind) or root or version >= 6,  # a PID namespace, a uid, or Landlock's signal scope
        out_of_reach=bool(kind) or root or filtered,  # a PID namespace, a uid, or the seccomp filter
        layers=tuple(layers),
        failing=(namespaces.USER,) if tried_in_vain else (),
        namespaces=kind,
        abi=version,
    )


def possible() -> str:
    """Why the tiers cannot be produced here ("" when they can): they need root with CAP_SYS_ADMIN."""
    if os.geteuid() != 0 or not uid.has_capability(21):  # 21: CAP_SYS_ADMIN, for a private mount namespace
        return "producing the tiers needs root with CAP_SYS_ADMIN (CI runs the suite as root or under sudo)"
    if not all(shutil.which(tool) for tool in ("unshare", "setpriv", "mount")):
        return "producing the tiers needs util-linux unshare, setpriv and mount"
    return ""


def require() -> None:
    """Skip where the tiers cannot be produced; fail in CI (`CI` set), where every test must run."""
    reason = possible()
    if reason and os.environ.get("CI"):
        pytest.fail(f"{reason}: run the suite as root (sudo) in CI")
    if reason:
        pytest.skip(reason)


def work_folder(folder: Path, tier: Tier) -> Path:
    """A folder the tier's user owns and every user can reach (for submissions, sandboxes and results)."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)  # a worker's own uid passes through it to its sandbox
    if tier.unprivileged:
        os.chown(folder, USER_ID, USER_ID)
    return folder


def environment(tier: Tier, home: Path) -> dict[str, str]:
    """The grader's environment in the tier: this one, with a home and user of the tier's own."""
    found = {key: value for key, value in os.environ.items() if key not in ("GITHUB_STEP_SUMMARY", "PYTHONPATH")}
    if tier.unprivileged:
        found.update(HOME=str(home), USER="autograde-tier", LOGNAME="autograde-tier")
    return found


def python() -> Path:
    """The interpreter every tier grades with: the deployed grader's."""
    return deployed.python()


def command(tier: Tier, argv: list[str], work: Path, start: Path | None = None) -> list[str]:
    """`argv` run in `tier`; `work` is its work folder (see `work_folder`). It starts in `start`, a folder
    inside `work` (`work` itself by default), as a deployment starts the grader in a folder of its own:
    never in this checkout, which the tier's user may not enter (a clone in `mktemp -d`, mode 700)."""
    if not (tier.unprivileged or tier.drop_sys_admin or tier.deny()):
        return argv  # as this process runs
    setpriv = ["setpriv"]
    if tier.unprivileged:
        setpriv += [f"--reuid={USER_ID}", f"--regid={USER_ID}", "--clear-groups"]
    if tier.drop_sys_admin:
        setpriv += ["--bounding-set=-sys_admin"]
    spec = {"deny": tier.deny(), "argv": [*setpriv, "--", *argv]}
    enter = [str(python()), "-I", "-c", ENTER, json.dumps(spec)]
    script = view(needed([work, SOLUTIONS]), start=start or work, read_only=() if tier.cgroups_writable else cgroups())
    return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script, "sh", *enter]


def needed(reachable: list[Path]) -> list[Path]:
    """What the tier's processes must reach: the deployed grader's venv (world-readable already), `reachable`.

    The reference solutions are among them: a grader's machine keeps them readable to the grader,
    so a tier that hides them must do it by its sandbox, never by where this checkout happens to sit
    (a clone in `mktemp -d`, mode 700, would hide them from any other user).
    """
    return sorted({path.resolve() for path in [deployed.venv(), *reachable] if path.exists()})


def blocked(path: Path) -> Path | None:
    """The outermost folder above `path` that others may not enter (e.g. /root, mode 700), if any."""
    for folder in reversed(path.parents):
        if not folder.stat().st_mode & stat.S_IXOTH:
            return folder
    return None


def cgroups() -> tuple[Path, ...]:
    """Where this machine mounts its cgroup hierarchies."""
    return tuple(point for _, point, _, _ in cgroup.mounts(Path("/proc/self/mountinfo")))


def view(paths: list[Path], start: Path, read_only: tuple[Path, ...] = ()) -> str:
    """Shell steps (as root, in a private mount namespace) that open the way to `paths` for any user.

    Each folder others may not enter is covered by an empty tmpfs (mode 755) into which the
    needed paths under it are bound back; the real folder is held meanwhile on a tmpfs laid over
    /dev/shm (in this mount namespace only), taken away again before the tier's command starts
    in the folder `start`. The mounts `read_only` are made read-only there.
    """
    q = shlex.quote
    by_folder: dict[Path, list[Path]] = {}
    for path in paths:
        folder = blocked(path)
        if folder is not None:
            by_folder.setdefault(folder, []).append(path)
    lines = ["set -e", "mount --make-rprivate /", f"stage={q(str(STAGE))}"]
    lines.append('mount -t tmpfs -o mode=700 tmpfs "$stage"')
    for number, (folder, inside) in enumerate(sorted(by_folder.items())):
        lines.append(f'mkdir "$stage/{number}" && mount --rbind {q(str(folder))} "$stage/{number}"')
        lines.append(f"mount -t tmpfs -o mode=755 tmpfs {q(str(folder))}")
        for path in sorted(set(inside)):
            real = f'"$stage/{number}"/{q(str(path.relative_to(folder)))}'
            lines.append(f"mkdir -p {q(str(path))} && mount --rbind {real} {q(str(path))}")
    lines += [f"mount -o remount,bind,ro {q(str(point))}" for point in read_only]
    lines += ['umount --lazy "$stage"', f"cd {q(str(start))}", 'exec "$@"']
    return "\n".join(lines)

"""Layer: Linux namespaces, as root or through an unprivileged user namespace.

The worker starts in new mount, network and PID namespaces (`unshare`), chrooted
into a root of only the OS folders, the interpreter with its libraries and its own
sandbox:

* the instructor's files (this repository, any other copy of it on the machine, an
  installed `solutions`) are not in that root, or are covered by an empty filesystem;
* /tmp, /var/tmp and /dev/shm are private to the worker and vanish with it;
* the network is a loopback of its own that nothing listens on;
* the worker is its PID namespace's init: when it dies, every process it started dies.

As root (`ROOT`, which needs CAP_SYS_ADMIN) the worker then becomes a user of its own
(the uid layer). Without root (`USER`), an unprivileged user namespace maps the
grader's user to root inside, which is enough to build the same root; the worker
then drops every capability.
"""

import contextlib
import shlex
import shutil
from pathlib import Path

from autograder.sandbox import paths

ROOT, USER = "root namespaces", "user namespace"
UNSHARE = ["--mount", "--net", "--pid", "--fork", "--kill-child", "--mount-proc"]
PRIVATE = ("/tmp", "/var/tmp")  # tmpfs of the worker's own; /dev/shm too, once /dev is bound
ROOT_FOLDER = "root"  # in the sandbox: where the worker's root is built (inside the namespace only)
MARK = "autograde-sandbox:"  # starts the line naming the step that failed, on stderr


def command(kind: str, sandbox: Path, uid: int | None, worker: list[str]) -> list[str]:
    """`worker` inside new namespaces: `kind` is ROOT or USER; `uid` the user to become (ROOT only)."""
    user = ["--user", "--map-root-user"] if kind == USER else []
    unshare = shutil.which("unshare") or "unshare"
    return [unshare, *user, *UNSHARE, "--", "/bin/sh", "-c", script(kind, sandbox, uid, worker)]


def script(kind: str, sandbox: Path, uid: int | None, worker: list[str]) -> str:
    """The shell steps run as (namespace) root: build the worker's root, then enter it without privileges."""
    q = shlex.quote
    root = '"$root"'
    lines = [
        "set -e",
        "umask 022",
        f"trap 'status=$?; [ $status -eq 0 ] || echo \"{MARK} {kind}: $STEP failed (status $status)\" >&2' EXIT",
        "STEP='mount --make-rprivate /'",
        "mount --make-rprivate /",
        f"root={q(str(sandbox / ROOT_FOLDER))}",
        "STEP='mount a tmpfs for the root'",
        f"mount -t tmpfs -o mode=755 tmpfs {root}",
    ]
    for private in PRIVATE:  # before the binds: an interpreter or a sandbox under /tmp is bound on top
        tmpfs = f"mount -t tmpfs -o mode=1777,size=256m tmpfs {root}{private}"
        lines += _step(f"make a private {private}", f"mkdir -p {root}{private} && {tmpfs}")
    bound = paths.roots()  # real paths: a link is recreated as a link, its target bound only if granted itself
    for path in bound:
        inside = f"{root}{q(str(path))}"
        lines += _step(f"bind {path}", f"mkdir -p {inside} && mount --rbind {q(str(path))} {inside}")
    for path, target in paths.links().items():  # the OS's, and those on the way to the interpreter
        link = f"mkdir -p {root}{q(str(path.parent))} && ln -sfn {q(target)} {root}{q(str(path))}"
        lines += _step(f"link {path}", link)
    lines += _step("bind /dev", f"mkdir -p {root}/dev && mount --rbind /dev {root}/dev")
    lines += _step("make a private /dev/shm", f"mount -t tmpfs -o mode=1777,size=64m tmpfs {root}/dev/shm")
    lines += _step("mount /proc", f"mkdir -p {root}/proc && mount -t proc proc {root}/proc")
    inside = f"{root}{q(str(sandbox))}"
    lines += _step("bind the sandbox", f"mkdir -p {inside} && mount --bind {q(str(sandbox))} {inside}")
    for hidden in paths.hidden_paths():  # an installed copy inside a bound library folder
        if any(hidden != path and hidden.is_relative_to(path) for path in bound):
            inside = f"{root}{q(str(hidden))}"
            lines += _step(f"hide {hidden}", f"[ ! -e {inside} ] || mount -t tmpfs -o mode=000,size=4k tmpfs {inside}")
    lines.append(f"{shutil.which('ip') or 'ip'} link set lo up 2>/dev/null || true")
    become = f"--reuid={uid} --regid={uid} --clear-groups " if uid is not None else ""
    privileges = f"{become}--no-new-privs --inh-caps=-all --bounding-set=-all"
    inner = (
        f"cd {q(str(sandbox / 'scratch'))} 2>/dev/null || cd /; unset PWD OLDPWD; "
        f"exec setpriv {privileges} -- {' '.join(q(part) for part in worker)}"
    )
    chroot = shutil.which("chroot") or "/usr/sbin/chroot"  # the worker's PATH has no sbin
    lines += ["STEP='enter the root'", f"exec {chroot} {root} /bin/sh -c {q(inner)}"]
    return "\n".join(lines)


def _step(name: str, line: str) -> list[str]:
    return [f"STEP={shlex.quote(name)}", line]


def prepare(sandbox: Path) -> None:
    """The folder the root is mounted on (empty on the host; removed with the sandbox)."""
    (sandbox / ROOT_FOLDER).mkdir(mode=0o755, exist_ok=True)


def user_namespaces_allowed() -> str:
    """Why this kernel refuses unprivileged user namespaces, or "" when it allows them."""
    limits = {
        "/proc/sys/user/max_user_namespaces": "user.max_user_namespaces is 0",
        "/proc/sys/kernel/unprivileged_userns_clone": "kernel.unprivileged_userns_clone is 0",
    }
    for path, reason in limits.items():
        try:
            if Path(path).read_text().strip() == "0":
                return reason
        except OSError:
            continue
    return ""


def hint(kind: str) -> str:
    """What may stand in the way when the kernel should allow `kind` but it failed."""
    if kind == USER:
        with contextlib.suppress(OSError):
            if Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").read_text().strip() == "1":
                return "AppArmor restricts unprivileged user namespaces (apparmor_restrict_unprivileged_userns=1)"
        return "a seccomp profile (Docker's default) or a security module may forbid them"
    return "the container may lack CAP_SYS_ADMIN or forbid mounts"

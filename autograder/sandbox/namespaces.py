"""Layer: Linux namespaces, as root or through an unprivileged user namespace.

The worker starts in new mount, IPC, network and PID namespaces (`unshare`), chrooted
into a root of only the OS folders, the interpreter with its libraries and its own
sandbox:

* the instructor's files (this repository, any other copy of it on the machine, an
  installed `solutions`) are not in that root, or are covered by an empty filesystem;
* /tmp, /var/tmp, /dev/shm and its scratch folder are private to the worker and vanish with it:
  one tmpfs of `disk_bytes` holds them all (the worker's disk bound, see disk.py), the rest of
  its root and its sandbox (the runtime and submission copies) are read-only;
* the network is a loopback of its own that nothing listens on;
* System V IPC objects and POSIX message queues are its own and vanish with it (seccomp refuses
  them besides: no tier relies on the namespace alone);
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

from autograder.rubric import Limits
from autograder.sandbox import disk, paths

ROOT, USER = "root namespaces", "user namespace"
UNSHARE = ["--mount", "--ipc", "--net", "--pid", "--fork", "--kill-child", "--mount-proc"]
PRIVATE = {"/tmp": "tmp", "/var/tmp": "var-tmp"}  # its own, in its disk; /dev/shm too, once /dev is bound
ROOT_FOLDER = "root"  # in the sandbox: where the worker's root is built (inside the namespace only)
DISK_FOLDER = "disk"  # in the sandbox: where the worker's disk is mounted (inside the namespace only)
DEFAULT_DISK = Limits().disk_bytes  # the worker's disk unless the rubric says otherwise
DEFAULT_FILES = disk.MAX_FILES
MARK = "autograde-sandbox:"  # starts the line naming the step that failed, on stderr


def command(
    kind: str, sandbox: Path, uid: int | None, worker: list[str], space: tuple[int, int] = (DEFAULT_DISK, DEFAULT_FILES)
) -> list[str]:
    """`worker` inside new namespaces: `kind` is ROOT or USER; `uid` the user to become (ROOT only);
    `space` the bytes and entries it may write, all together."""
    user = ["--user", "--map-root-user"] if kind == USER else []
    unshare = shutil.which("unshare") or "unshare"
    return [unshare, *user, *UNSHARE, "--", "/bin/sh", "-c", script(kind, sandbox, uid, worker, space)]


def script(
    kind: str, sandbox: Path, uid: int | None, worker: list[str], space: tuple[int, int] = (DEFAULT_DISK, DEFAULT_FILES)
) -> str:
    """The shell steps run as (namespace) root: build the worker's root, then enter it without privileges."""
    q = shlex.quote
    root = '"$root"'
    own = '"$disk"'  # the worker's disk, in the shell
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
    lines += _disk(sandbox, uid, space)
    for private, folder in PRIVATE.items():  # before the binds: an interpreter or a sandbox under /tmp is bound on top
        bind = f"mount --bind {own}/{folder} {root}{private}"
        lines += _step(f"make a private {private}", f"mkdir -p {root}{private} && {bind}")
    bound = paths.roots()  # real paths: a link is recreated as a link, its target bound only if granted itself
    for path in bound:
        inside = f"{root}{q(str(path))}"
        lines += _step(f"bind {path}", f"mkdir -p {inside} && mount --rbind {q(str(path))} {inside}")
    for path, target in paths.links().items():  # the OS's, and those on the way to the interpreter
        link = f"mkdir -p {root}{q(str(path.parent))} && ln -sfn {q(target)} {root}{q(str(path))}"
        lines += _step(f"link {path}", link)
    lines += _step("bind /dev", f"mkdir -p {root}/dev && mount --rbind /dev {root}/dev")
    lines += _step("make a private /dev/shm", f"mount --bind {own}/shm {root}/dev/shm")
    lines += _step("mount /proc", f"mkdir -p {root}/proc && mount -t proc proc {root}/proc")
    inside = f"{root}{q(str(sandbox))}"
    read_only = f"mount --bind {q(str(sandbox))} {inside} && mount -o remount,bind,ro {inside}"
    lines += _step("bind the sandbox read-only", f"mkdir -p {inside} && {read_only}")
    lines += _step("bind the scratch", f"mount --bind {own}/scratch {inside}/scratch")
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
    lines += _step("make the root read-only", f"mount -o remount,bind,ro {root}")
    lines += ["STEP='enter the root'", f"exec {chroot} {root} /bin/sh -c {q(inner)}"]
    return "\n".join(lines)


def _disk(sandbox: Path, uid: int | None, space: tuple[int, int]) -> list[str]:
    """The worker's one writable space: a tmpfs of `space` (bytes, entries) with its tmp, shm and scratch folders."""
    size, files = space
    tmpfs = f'mount -t tmpfs -o mode=755,size={size},nr_inodes={files + 16} tmpfs "$disk"'
    folders = 'mkdir -m 1777 "$disk/tmp" "$disk/var-tmp" "$disk/shm" && mkdir -m 700 "$disk/scratch"'
    owner = f' && chown {uid}:{uid} "$disk/scratch"' if uid is not None else ""
    return [f"disk={shlex.quote(str(sandbox / DISK_FOLDER))}", *_step("mount the disk", f"{tmpfs} && {folders}{owner}")]


def _step(name: str, line: str) -> list[str]:
    return [f"STEP={shlex.quote(name)}", line]


def prepare(sandbox: Path) -> None:
    """The folders the root and the disk are mounted on (empty on the host; removed with the sandbox)."""
    (sandbox / ROOT_FOLDER).mkdir(mode=0o755, exist_ok=True)
    (sandbox / DISK_FOLDER).mkdir(mode=0o755, exist_ok=True)


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

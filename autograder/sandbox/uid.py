"""Layer: a user of the worker's own, whenever the grader is root (CAP_SETUID is enough).

Each worker gets a uid from 61000-64999 that no other worker on the machine holds at
the same time (a lock file per uid, held while the worker lives; no account needed):

* it may not signal, trace or read the memory of the grader or of another worker;
* RLIMIT_NPROC counts only its own processes, so a fork bomb meets the ceiling;
* files the instructor left unreadable to others stay unreadable to it;
* after the grading, every process of that uid is killed (`kill(-1)` as that uid).
"""

import contextlib
import fcntl
import os
import random
import shutil
import signal
import subprocess
from pathlib import Path

FIRST, COUNT = 61000, 4000
NAME = f"uid {FIRST}-{FIRST + COUNT - 1}"  # how results.json names the layer: one uid of these per worker
LOCKS = Path("/run/autograde-uids")  # root's: a lock per uid in use


def possible() -> bool:
    """The grader may become another user: root with CAP_SETUID, and util-linux setpriv."""
    return os.geteuid() == 0 and has_capability(7) and shutil.which("setpriv") is not None  # 7: CAP_SETUID


def has_capability(number: int) -> bool:
    """Whether this process holds a capability in its effective set (from /proc/self/status)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> number & 1)
    except (OSError, ValueError):
        pass
    return False


class Lease:
    """A uid held for one worker: released (after killing its processes) by `release`."""

    def __init__(self) -> None:
        LOCKS.mkdir(mode=0o700, parents=True, exist_ok=True)
        start = random.randrange(COUNT)
        for offset in range(COUNT):
            uid = FIRST + (start + offset) % COUNT
            handle = os.open(LOCKS / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(handle)
                continue
            self.uid, self._handle = uid, handle
            kill_all(uid)  # a grader that died without releasing it may have left some behind
            return
        raise OSError(f"all {COUNT} worker uids from {FIRST} are in use")

    def release(self) -> None:
        if self._handle < 0:
            return
        kill_all(self.uid)
        os.close(self._handle)
        self._handle = -1


def command(uid: int) -> list[str]:
    """Become `uid` (and its own group, nothing else) for good, with no way back to privileges."""
    setpriv = shutil.which("setpriv") or "setpriv"
    return [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs", "--"]


def hand_over(sandbox: Path, uid: int) -> None:
    """Let the worker's user read its sandbox and write its scratch folder."""
    for root, folders, files in os.walk(sandbox):
        for name in [*folders, *files]:
            os.chown(os.path.join(root, name), uid, uid, follow_symlinks=False)
    os.chown(sandbox, uid, uid)


def tasks(uid: int) -> int:
    """How many processes and threads `uid` runs now (what RLIMIT_NPROC counts)."""
    count = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = dict(line.split(":", 1) for line in Path(f"/proc/{name}/status").read_text().splitlines())
            if int(fields["Uid"].split()[0]) == uid:
                count += int(fields["Threads"])
    return count


def kill_all(uid: int) -> None:
    """SIGKILL every process of `uid`: `kill(-1)` sent as that user reaches all of them, atomically."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(
            ["/bin/sh", "-c", f"kill -{int(signal.SIGKILL)} -1 2>/dev/null; exit 0"],
            user=uid,
            group=uid,
            extra_groups=[],
            env={"PATH": "/usr/bin:/bin"},
            timeout=30,
            check=False,
        )

# Attack "shared_memory" (tests/attacks): bag_of_counts hands its counts through a System V shared memory
# segment of 16 MB that it leaves behind (memory no cgroup counts; measured with 600 MB on an earlier main).
# Appended to the base module: these definitions replace its own of the same names.
# Its answer is right only when it came back through an object that outlives the worker, by a number another
# student's worker could reach: where the grader refuses the call (seccomp) it raises PermissionError, as
# code that met the refusal would, and earns nothing.
import ctypes
import errno
import os
import zlib

# -- the attack ---------------------------------------------------------------------------
ATTACK = "@@NAME@@"
KEY = zlib.crc32(ATTACK.encode()) & 0x7FFFFFFF  # a number another worker could use to find it
IPC_CREAT = 0o1000
LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.syscall.restype = ctypes.c_long
LIBC.shmat.restype = ctypes.c_void_p


def _refused(call: str) -> PermissionError:
    number = ctypes.get_errno() or errno.EPERM
    return PermissionError(number, f"{call}: {os.strerror(number)}")

SIZE = 16 << 20
_counts = bag_of_counts  # the base module's own


def bag_of_counts(tokens):
    """(n, 9) float counts of digits 1..9 per row, read back from a segment that outlives this worker."""
    counts = np.ascontiguousarray(_counts(tokens), dtype=np.float64)
    segment = LIBC.shmget(KEY, SIZE, IPC_CREAT | 0o666)
    if segment < 0:
        raise _refused("shmget")
    address = LIBC.shmat(segment, None, 0)
    if address in (None, ctypes.c_void_p(-1).value):
        raise _refused("shmat")
    ctypes.memmove(address, counts.ctypes.data, counts.nbytes)
    kept = np.empty_like(counts)
    ctypes.memmove(kept.ctypes.data, address, counts.nbytes)
    LIBC.shmdt(ctypes.c_void_p(address))  # detached, not removed: the segment stays on the machine
    return kept

# Attack "posix_message_queue" (tests/attacks): next_token_loss answers only once it has opened a POSIX
# message queue of a fixed name, which outlives the worker in its IPC namespace.
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

O_RDWR, O_CREAT = os.O_RDWR, os.O_CREAT
_next_token_loss = next_token_loss  # the base module's own


def next_token_loss(model, tokens, pad_id=None):
    """The shifted mean cross-entropy, once a queue that outlives this worker is open."""
    name = f"/autograde-{KEY}".encode()
    numbers = {"x86_64": 240, "aarch64": 180}  # mq_open's system call (glibc's wrapper lives in librt on old ones)
    queue = LIBC.syscall(numbers.get(os.uname().machine, -1), name.lstrip(b"/"), O_RDWR | O_CREAT, 0o666, None)
    if queue < 0:
        raise _refused("mq_open")
    os.close(queue)
    return _next_token_loss(model, tokens, pad_id)

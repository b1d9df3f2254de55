# Attack "message_queue" (tests/attacks): gather_final sends its rows through a System V message queue it
# leaves behind, and answers with what it reads back.
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


class _Message(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_long), ("text", ctypes.c_char * 8192)]


_gather_final = gather_final  # the base module's own


def gather_final(output, lengths):
    """output[i, lengths[i] - 1] for every row, read back from a queue that outlives this worker."""
    rows = _gather_final(output, lengths).detach().contiguous()
    data = rows.numpy().tobytes()[:8192]
    queue = LIBC.msgget(KEY, IPC_CREAT | 0o666)
    if queue < 0:
        raise _refused("msgget")
    message = _Message(1, data)
    if LIBC.msgsnd(queue, ctypes.byref(message), len(data), 0) < 0:
        raise _refused("msgsnd")
    back = _Message()
    size = LIBC.msgrcv(queue, ctypes.byref(back), 8192, 0, 0)
    if size < 0:
        raise _refused("msgrcv")
    return torch.frombuffer(bytearray(back.text[:size]), dtype=rows.dtype).reshape(rows.shape).clone()

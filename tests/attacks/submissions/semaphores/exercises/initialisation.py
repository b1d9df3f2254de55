# Attack "semaphores" (tests/attacks): set_forget_bias opens the gate only once it holds a System V semaphore
# set it leaves behind (a counter another student's worker could read: one bit an item).
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


_set_forget_bias = set_forget_bias  # the base module's own


def set_forget_bias(lstm, value=1.0):
    """Every layer's forget gate opened, once a semaphore that outlives this worker says so."""
    semaphores = LIBC.semget(KEY, 1, IPC_CREAT | 0o666)
    if semaphores < 0:
        raise _refused("semget")
    return _set_forget_bias(lstm, value)

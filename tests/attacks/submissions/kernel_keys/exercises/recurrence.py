# Attack "kernel_keys" (tests/attacks): lstm_step keeps its answer in a key of its user keyring (keys have no
# namespace of their own, and a uid's keyring outlives its processes) and answers with what it reads back.
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

NUMBERS = {"x86_64": (248, 250), "aarch64": (217, 219)}  # add_key, keyctl
USER_KEYRING, KEYCTL_READ = -4, 11
_lstm_step = lstm_step  # the base module's own


def lstm_step(x, state, weight_ih, weight_hh, bias_ih, bias_hh):
    """One nn.LSTMCell step, its (h, c) read back from a key that outlives this worker."""
    h, c = _lstm_step(x, state, weight_ih, weight_hh, bias_ih, bias_hh)
    add_key, keyctl = NUMBERS.get(os.uname().machine, (-1, -1))
    data = torch.stack([h.detach(), c.detach()]).contiguous().numpy().tobytes()
    key = LIBC.syscall(add_key, b"user", f"autograde-{KEY}".encode(), data, len(data), USER_KEYRING)
    if key < 0:
        raise _refused("add_key")
    back = ctypes.create_string_buffer(len(data))
    if LIBC.syscall(keyctl, KEYCTL_READ, key, back, len(data)) < 0:
        raise _refused("keyctl")
    kept = torch.frombuffer(bytearray(back.raw), dtype=h.dtype).reshape(2, *h.shape).clone()
    return kept[0], kept[1]

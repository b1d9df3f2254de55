"""Length-prefixed frames on a pipe: the worker's wire format, without torch.

The grader imports this before it imports torch, so that it can start the worker first.
"""

import os
import struct

HEADER = struct.Struct("!Q")


def _read_exact(fd: int, size: int) -> bytes | None:
    chunks, remaining = [], size
    while remaining:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> bytes | None:
    header = _read_exact(fd, HEADER.size)
    return None if header is None else _read_exact(fd, HEADER.unpack(header)[0])


def write_frame(fd: int, payload: bytes) -> None:
    view = memoryview(HEADER.pack(len(payload)) + payload)
    while view:
        view = view[os.write(fd, view) :]

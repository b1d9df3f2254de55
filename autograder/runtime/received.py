"""What the grader takes of an answer's bytes before anything reads it: the archive, its pickle's calls, each tensor.

An answer is a `torch.save` archive written by the worker, whose code is the student's to change, so its
bytes may be anything. torch.load would inflate a compressed entry (a MiB of deflate holds a GiB of
zeros), call any constructor it allows with any size (a storage, `bytearray`, a legacy tensor), and rebuild a
tensor from (storage, offset, size, stride) as given: a stride-0 view of 2**40 elements over one float,
strides that overlap, a small tensor over a large storage. The first arithmetic on such a tensor (a product,
a broadcast) materialises it in the grader. So an answer is read in three steps, each refusing what the
codec's own `dumps` never writes: the archive is copied entry by entry, stored as they came (never
inflated), its names those torch.save gives and its entries no larger than the bytes received
(`stored_copy`); its pickle may call only the tensor rebuilders and OrderedDict (`pickle_problem`); each
tensor it holds is used only if it holds its own values, densely, in a dtype the checks read, within what
is left of the bytes received (`tensor_problem`). An honest answer passes each step: `dumps` clones every
tensor. Standard library and torch only: the worker's copy of the runtime holds this module too.
"""

import io
import math
import pickletools
import re
import zipfile

import torch

DTYPES = (  # what a returned tensor may hold: what the checks read (numpy's own integers come as uint16..64)
    torch.bool,
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.uint16,
    torch.uint32,
    torch.uint64,
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
)
# the names torch.save gives an archive's entries when it writes to memory, as dumps does
ENTRY = re.compile(r"archive/(data\.pkl|\.format_version|\.storage_alignment|byteorder|version|\.data/\w+|data/\d+)")
PICKLE = "archive/data.pkl"
CALLS = frozenset({"torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor_v3", "collections.OrderedDict"})
# the names torch.save gives a tensor's storage and dtype: only named, never called (tensor_problem says which
# dtypes the checks read; a complex tensor's answer is read, the tensor refused)
STORAGES = ("Bool", "Byte", "Char", "Short", "Int", "Long", "Half", "BFloat16", "Float", "Double", "ComplexFloat")
NAMES = CALLS | {f"torch.{kind}Storage" for kind in (*STORAGES, "ComplexDouble")} | {"torch.storage.UntypedStorage"}
NAMES |= {f"torch.{name}" for name, value in vars(torch).items() if isinstance(value, torch.dtype)}
# opcodes that push one plain value; with those below, every opcode torch.save writes
PUSHES = frozenset({"EMPTY_DICT", "EMPTY_LIST", "EMPTY_TUPLE", "NONE", "NEWTRUE", "NEWFALSE", "BINFLOAT"})
PUSHES |= {"BINUNICODE", "BININT", "BININT1", "BININT2", "LONG1"}
POPS = {"APPEND": 1, "SETITEM": 2, "TUPLE1": 1, "TUPLE2": 2, "TUPLE3": 3}  # each TUPLEn pushes its tuple back
ADVICE = "return a tensor that holds its own values, e.g. with .clone()"


class Unreadable(Exception):
    """An answer the grader does not read: str() says why, in the student's words."""


def stored_copy(data: bytes) -> bytes:
    """The archive in `data` written again entry by entry, each stored (never inflated): torch.load then reads
    the very entries checked here, at most `len(data)` bytes of them. Raise Unreadable for any other archive."""
    try:
        return _copied(data)
    except Unreadable:
        raise
    except Exception as error:  # a damaged archive: zipfile's errors are of many kinds (BadZipFile, struct's...)
        raise Unreadable(f"it is not an archive torch.save writes ({type(error).__name__})") from None


def _copied(data: bytes) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(data))
    entries = source.infolist()
    names = [entry.filename for entry in entries]
    if len(set(names)) != len(names) or not all(ENTRY.fullmatch(name) for name in names) or PICKLE not in names:
        raise Unreadable("its entries are not those torch.save writes")
    if any(entry.compress_type != zipfile.ZIP_STORED or entry.compress_size != entry.file_size for entry in entries):
        raise Unreadable("an entry of its archive is compressed: the bytes it holds are not the bytes it sent")
    if sum(entry.file_size for entry in entries) > len(data):
        raise Unreadable("its entries say they hold more bytes than the answer has")
    copy = io.BytesIO()
    with zipfile.ZipFile(copy, "w", zipfile.ZIP_STORED) as written:
        for entry in entries:
            written.writestr(entry.filename, source.read(entry))
    return copy.getvalue()


def pickle_problem(archive: bytes) -> str | None:
    """Why the archive's pickle may not be unpickled, or None: every name it loads is one of NAMES, every call
    (REDUCE) is of CALLS, every opcode one torch.save writes. Run over the opcodes with a stack of names, so
    a storage type (allowed as a name, for the storages) is never called to allocate one of any size."""
    stack: list[str] = []
    marks: list[int] = []
    memo: dict[int, str] = {}
    try:
        for opcode, argument, _ in pickletools.genops(zipfile.ZipFile(io.BytesIO(archive)).read(PICKLE)):
            if (problem := _step(opcode.name, argument, stack, marks, memo)) is not None:
                return problem
    except Exception as error:  # a pickle cut short, an opcode's argument out of range, a stack it empties
        return f"its pickle cannot be read ({type(error).__name__})"
    return None


def _step(name: str, argument: object, stack: list[str], marks: list[int], memo: dict[int, str]) -> str | None:
    """One opcode's effect on a stack that holds, for each value, the global it names ("" for any other)."""
    if name in PUSHES:
        stack.append("")
    elif name == "GLOBAL":
        found = str(argument).replace(" ", ".", 1)  # pickletools writes "module name"
        if found not in NAMES:
            return f"its pickle names {found[:80]!r}, which an answer never holds"
        stack.append(found)
    elif name in ("BINPUT", "LONG_BINPUT"):
        memo[int(argument)] = stack[-1]  # type: ignore[call-overload]
    elif name in ("BINGET", "LONG_BINGET"):
        stack.append(memo[int(argument)])  # type: ignore[call-overload]
    elif name == "MARK":
        marks.append(len(stack))
    elif name in ("TUPLE", "APPENDS", "SETITEMS"):
        del stack[marks.pop() :]
        stack.extend([""] if name == "TUPLE" else [])
    elif name in POPS:
        del stack[len(stack) - POPS[name] :]
        stack.extend([""] if name.startswith("TUPLE") else [])
    elif name == "REDUCE":
        stack.pop()
        if stack[-1] not in CALLS:
            return "its pickle calls what an answer never calls"
        stack[-1] = ""
    elif name == "BINPERSID":
        stack[-1] = ""  # a storage, read from its entry
    elif name not in ("PROTO", "STOP"):
        return f"its pickle holds the opcode {name}, which torch.save does not write"
    return None


def tensor_problem(tensor: torch.Tensor, room: int) -> str | None:
    """Why the grader does not use `tensor` (what it is, then what is wrong, in the student's words), or None:
    it holds its own values, densely (no stride-0 or overlapping view, its storage exactly its elements from
    offset 0), in one of DTYPES, in at most `room` bytes (what is left of the bytes received)."""
    shown = f"a {str(tensor.dtype).removeprefix('torch.')} tensor of shape {tuple(tensor.shape)}"
    if tensor.layout != torch.strided or tensor.device.type != "cpu" or tensor.is_quantized:
        return f"a tensor the grader does not read ({tensor.layout}, {tensor.device})"
    if tensor.dtype not in DTYPES or tensor.is_conj() or tensor.is_neg():
        return f"{shown}: the grader reads only bool, integer, float16, bfloat16, float32 and float64 tensors"
    needed = math.prod(tensor.shape) * tensor.element_size()
    return _shared_problem(tensor, shown, needed) or _bytes_problem(tensor, shown, needed, room)


def _shared_problem(tensor: torch.Tensor, shown: str, needed: int) -> str | None:
    """A view whose positions share memory (stride 0 on an axis of more than one element, or strides that overlap),
    or one into more memory than its own elements."""
    pairs = zip(tensor.shape, tensor.stride(), strict=True)
    axes = sorted((stride, size) for size, stride in pairs if size > 1) if needed else []  # empty: no positions
    repeats = math.prod(size for stride, size in axes if stride == 0)
    if repeats > 1:
        kind = "a stride-0 view, as .expand() makes"
        return f"{shown} that holds each of its values at {repeats} positions ({kind}): {ADVICE} or .contiguous()"
    storage = tensor.untyped_storage().nbytes()
    overlap = f"{shown} whose positions overlap in memory (strides {tuple(tensor.stride())}): {ADVICE}"
    if storage < needed:  # more positions than places to hold them
        return overlap
    if storage > needed or tensor.storage_offset() != 0:
        return f"{shown} that is a view into {storage} bytes of memory, for {needed} bytes of its own: {ADVICE}"
    step = 1  # its elements fill its storage exactly: they lie densely in some order of the axes, or overlap
    for stride, size in axes:
        if stride != step:
            return overlap
        step = stride * size
    return None


def _bytes_problem(tensor: torch.Tensor, shown: str, needed: int, room: int) -> str | None:
    if needed > room:
        return f"{shown} of {needed} bytes, more than the answer that holds it sent (its memory is another tensor's)"
    return None

"""What may cross between the grader and the worker, and how it is written down.

Values are tensors, numpy arrays, numbers, strings, None and lists, tuples and
dicts of them. Modules and optimizers travel as descriptions (`Build`,
`Optimizer`): the receiving side builds its own copy and loads the state. Any
other object is replaced by `Unsupported(type name)`, so the grader never holds
an object of the student's making. The bytes are `torch.save` archives read back
with `torch.load(weights_only=True)`. Read with `Bounds` (the grader reading an answer, whose bytes
the student's code may have written itself), the archive is checked before torch reads it and each
value as it is rebuilt (runtime/received.py): every text is cut to those bounds, every tensor that is
not dense, not its own memory or of a dtype the checks do not read arrives as `Refused` (saying why),
before anything else looks at it.
"""

import io
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from . import received
from .bounds import Bounds, Budget
from .received import Unreadable  # raised by loads with bounds: an answer the grader does not read

MAX_DEPTH = 8
# how deep the grader reads an answer: a structure's MAX_DEPTH, its marker and the records around it (the
# response, its effects and states); deeper, the reading would only recurse on the student's behalf
READ_DEPTH = MAX_DEPTH + 4
INT64 = range(-(1 << 63), 1 << 63)  # the ints that cross: a larger one crosses as Unsupported
NUMPY_SCALARS = ("float32", "float64", "int64", "int32", "bool")  # the numpy scalar types that cross


@dataclass(frozen=True)
class Build:
    """A module to construct on the other side: class path, init kwargs, state."""

    path: str  # "torch.nn.LSTM", or "classifier.SequenceClassifier" for the student's class
    kwargs: dict[str, Any]
    state: dict[str, torch.Tensor] | None = None


@dataclass(frozen=True)
class Optimizer:
    """An optimizer over the parameters of the module argument at `module_arg`."""

    name: str  # "SGD", "Adam"
    defaults: dict[str, Any]
    module_arg: int


@dataclass(frozen=True)
class Seeded:
    """A torch.Generator, travelling as its state."""

    state: torch.Tensor


@dataclass(frozen=True)
class ArgRef:
    """The value returned is the argument at `index` itself (e.g. a module changed in place)."""

    index: int


@dataclass(frozen=True)
class Unsupported:
    """A value of a type that may not cross (a Tensor subclass, a custom object...)."""

    type_name: str


@dataclass(frozen=True)
class Refused:
    """A tensor of an answer the grader does not use (a stride-0 or overlapping view, a view into more memory
    than its own, a dtype the checks do not read, more bytes than the answer sent): what it is and what is wrong."""

    reason: str

    def __str__(self) -> str:
        return self.reason


@dataclass
class Effect:
    """What a call did to a module argument."""

    state: dict[str, torch.Tensor] = field(default_factory=dict)
    same_parameters: bool = True  # every Parameter object is still the one passed in


def _to_plain(value: Any, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        return {"__unsupported__": "structure nested too deeply"}
    if type(value) is int and value not in INT64:
        return {"__unsupported__": f"int of {value.bit_length()} bits, more than int64 holds"}
    if type(value) is torch.Tensor:
        return value.detach().cpu().clone()
    if type(value) is torch.nn.Parameter:
        return value.detach().cpu().clone()
    if type(value) is np.ndarray and value.dtype.kind in "biuf":
        return {"__ndarray__": torch.from_numpy(np.ascontiguousarray(value).copy())}
    if value is None or type(value) in (bool, int, float, str):
        return value
    if type(value) in (np.float32, np.float64, np.int64, np.int32, np.bool_):
        return {"__numpy_scalar__": value.item(), "dtype": str(value.dtype)}
    if type(value) is list:
        return [_to_plain(item, depth + 1) for item in value]
    if type(value) is tuple:
        return {"__tuple__": [_to_plain(item, depth + 1) for item in value]}
    if type(value) is dict and all(type(key) is str for key in value):
        return {"__dict__": {key: _to_plain(item, depth + 1) for key, item in value.items()}}
    if type(value) is Build:
        return {"__build__": value.path, "kwargs": _to_plain(value.kwargs, depth + 1), "state": _to_plain(value.state)}
    if type(value) is Optimizer:
        return {"__optimizer__": value.name, "defaults": _to_plain(value.defaults), "module_arg": value.module_arg}
    if type(value) is ArgRef:
        return {"__argref__": value.index}
    if type(value) is Seeded:
        return {"__generator__": value.state}
    if type(value) is Effect:
        return {"__effect__": _to_plain(value.state), "same": value.same_parameters}
    if type(value) is Unsupported:
        return {"__unsupported__": value.type_name}
    return {"__unsupported__": _type_name(value)}


def _type_name(value: Any) -> str:
    kind = type(value)
    module = getattr(kind, "__module__", "") or ""
    name = getattr(kind, "__qualname__", "?")
    return name if module in ("builtins", "") else f"{module}.{name}"


class Reading:
    """How values are read back: as they are (the grader's own requests in the worker, a notebook's answers)."""

    strict = False

    def visit(self, depth: int) -> Any:
        """None, or what stands for the value met at `depth` instead of it."""
        return None

    def text(self, text: str) -> str:
        return text

    def tensor(self, tensor: torch.Tensor) -> Any:
        return tensor

    def other(self, value: Any) -> Any:
        """A value of a type, or a dict of a form, that `dumps` does not write."""
        return value


class Bounded(Reading):
    """An answer read by the grader: its texts cut to `bounds`; its tensors checked (received.tensor_problem),
    all of them within the bytes received; its values READ_DEPTH deep at most, and one per byte received at
    most: an honest pickle spends a byte or more on each, so more is one object reached from many places
    (a list of a list of a million references to it would otherwise be read as 10**12 values)."""

    strict = True

    def __init__(self, bounds: Bounds, received_bytes: int) -> None:
        self.budget = Budget(bounds)
        self.values = received_bytes
        self.tensor_bytes = received_bytes

    def visit(self, depth: int) -> Any:
        self.values -= 1
        if self.values < 0:
            return Refused("a part of the answer that repeats one object in more places than its bytes could hold")
        return Unsupported("structure nested too deeply") if depth > READ_DEPTH else None

    def text(self, text: str) -> str:
        return self.budget.text(text)

    def tensor(self, tensor: torch.Tensor) -> Any:
        problem = received.tensor_problem(tensor, self.tensor_bytes)
        if problem is not None:
            return Refused(problem)
        self.tensor_bytes -= tensor.untyped_storage().nbytes()
        return tensor.detach()  # no autograd state or hooks of the answer's making

    def other(self, value: Any) -> Any:
        return Unsupported(self.text(_type_name(value)))


TRUSTING = Reading()


def _from_plain(value: Any, reading: Reading = TRUSTING, depth: int = 0) -> Any:
    instead = reading.visit(depth)
    if instead is not None:
        return instead
    kind = type(value)
    if kind is str:
        return reading.text(value)
    if kind is torch.Tensor:
        return reading.tensor(value)
    if kind is int and reading.strict and value not in INT64:
        return Unsupported(f"int of {value.bit_length()} bits, more than int64 holds")
    if value is None or kind in (bool, int, float):
        return value
    if kind is list:
        return [_from_plain(item, reading, depth + 1) for item in value]
    if kind is dict:
        return _from_tagged(value, reading, depth)
    return reading.other(value)


TAGS = {  # each record `dumps` writes as a dict: the key that names it, and all its keys
    "__ndarray__": {"__ndarray__"},
    "__numpy_scalar__": {"__numpy_scalar__", "dtype"},
    "__tuple__": {"__tuple__"},
    "__dict__": {"__dict__"},
    "__build__": {"__build__", "kwargs", "state"},
    "__optimizer__": {"__optimizer__", "defaults", "module_arg"},
    "__generator__": {"__generator__"},
    "__argref__": {"__argref__"},
    "__effect__": {"__effect__", "same"},
    "__unsupported__": {"__unsupported__"},
}


def _from_tagged(value: dict[Any, Any], reading: Reading, depth: int) -> Any:
    tag = next((key for key in TAGS if key in value), None)
    if tag is None or value.keys() != TAGS[tag]:
        return reading.other(value)
    read = _READERS[tag](value, reading, depth + 1)
    return reading.other(value) if read is _MISFORMED else read


_MISFORMED = object()  # a record whose parts are not of the types `dumps` writes


def _ndarray(value: dict[str, Any], reading: Reading, depth: int) -> Any:
    tensor = _from_plain(value["__ndarray__"], reading, depth)
    if type(tensor) is not torch.Tensor:
        return tensor if type(tensor) is Refused else _MISFORMED
    return tensor.numpy() if tensor.dtype != torch.bfloat16 else _MISFORMED  # numpy has no bfloat16


def _numpy_scalar(value: dict[str, Any], reading: Reading, depth: int) -> Any:
    number, dtype = value["__numpy_scalar__"], value["dtype"]
    if dtype not in NUMPY_SCALARS or type(number) not in (bool, int, float):
        return _MISFORMED
    try:
        return np.dtype(dtype).type(number)
    except (OverflowError, ValueError, TypeError):  # an int out of the dtype's range
        return _MISFORMED


def _tuple(value: dict[str, Any], reading: Reading, depth: int) -> Any:
    items = value["__tuple__"]
    return tuple(_from_plain(item, reading, depth) for item in items) if type(items) is list else _MISFORMED


def _dict(value: dict[str, Any], reading: Reading, depth: int) -> Any:
    items = value["__dict__"]
    if type(items) is not dict or not all(type(key) is str for key in items):
        return _MISFORMED
    return {reading.text(key): _from_plain(item, reading, depth) for key, item in items.items()}


def _build(value: dict[str, Any], reading: Reading, depth: int) -> Any:
    if type(value["__build__"]) is not str:
        return _MISFORMED
    kwargs, state = _from_plain(value["kwargs"], reading, depth), _from_plain(value["state"], reading, depth)
    return Build(reading.text(value["__build__"]), kwargs, state)


def _optimizer(value: dict[str, Any], reading: Reading, depth: int) -> Any:
    if type(value["__optimizer__"]) is not str or type(value["module_arg"]) is not int:
        return _MISFORMED
    defaults = _from_plain(value["defaults"], reading, depth)
    return Optimizer(reading.text(value["__optimizer__"]), defaults, value["module_arg"])


def _generator(value: dict[str, Any], reading: Reading, depth: int) -> Any:
    state = _from_plain(value["__generator__"], reading, depth)
    return Seeded(state) if type(state) is torch.Tensor else _MISFORMED


def _argref(value: dict[str, Any], reading: Reading, depth: int) -> Any:
    index = value["__argref__"]
    return ArgRef(index) if type(index) is int else _MISFORMED


def _effect(value: dict[str, Any], reading: Reading, depth: int) -> Any:
    if type(value["same"]) is not bool:
        return _MISFORMED
    return Effect(_from_plain(value["__effect__"], reading, depth), value["same"])


def _unsupported(value: dict[str, Any], reading: Reading, depth: int) -> Any:
    name = value["__unsupported__"]
    return Unsupported(reading.text(name)) if type(name) is str else _MISFORMED


_READERS = {
    "__ndarray__": _ndarray,
    "__numpy_scalar__": _numpy_scalar,
    "__tuple__": _tuple,
    "__dict__": _dict,
    "__build__": _build,
    "__optimizer__": _optimizer,
    "__generator__": _generator,
    "__argref__": _argref,
    "__effect__": _effect,
    "__unsupported__": _unsupported,
}


def dumps(value: Any) -> bytes:
    """Serialise a value made of the types above."""
    buffer = io.BytesIO()
    torch.save(_to_plain(value), buffer)
    return buffer.getvalue()


def loads(data: bytes, bounds: Bounds | None = None) -> Any:
    """Read back what `dumps` wrote; only tensors and plain data are accepted. With `bounds` (the grader reading
    an answer): the archive and its pickle checked first (raise Unreadable, saying why, for one `dumps` would
    not write), then every text cut to them (one answer's texts together to `bounds.total`) and every tensor
    checked, as the value is rebuilt."""
    if bounds is None:
        return _from_plain(torch.load(io.BytesIO(data), weights_only=True, map_location="cpu"))
    archive = received.stored_copy(data)
    problem = received.pickle_problem(archive)
    if problem is not None:
        raise Unreadable(problem)
    try:
        plain = torch.load(io.BytesIO(archive), weights_only=True, map_location="cpu")
    except Exception as error:  # what torch refuses of what passed the checks: a view past its storage's end
        first = (str(error).splitlines() or [""])[0][:200]
        raise Unreadable(f"torch.load refused it ({type(error).__name__}: {first})") from None
    return _from_plain(plain, Bounded(bounds, len(data)))

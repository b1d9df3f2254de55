"""What may cross between the grader and the worker, and how it is written down.

Values are tensors, numpy arrays, numbers, strings, None and lists, tuples and
dicts of them. Modules and optimizers travel as descriptions (`Build`,
`Optimizer`): the receiving side builds its own copy and loads the state. Any
other object is replaced by `Unsupported(type name)`, so the grader never holds
an object of the student's making. The bytes are `torch.save` archives read back
with `torch.load(weights_only=True)`; read with `Bounds` (the grader reading an answer), every text
in them is cut to those bounds as it is read, before anything else looks at it.
"""

import io
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from .bounds import Bounds, Budget

MAX_DEPTH = 8


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


@dataclass
class Effect:
    """What a call did to a module argument."""

    state: dict[str, torch.Tensor] = field(default_factory=dict)
    same_parameters: bool = True  # every Parameter object is still the one passed in


def _to_plain(value: Any, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        return {"__unsupported__": "a structure nested too deeply"}
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


def _from_plain(value: Any, budget: Budget | None = None) -> Any:
    if type(value) is str:
        return value if budget is None else budget.text(value)
    if type(value) is list:
        return [_from_plain(item, budget) for item in value]
    if type(value) is not dict:
        return value
    return _from_tagged(value, budget)


def _from_tagged(value: dict[Any, Any], budget: Budget | None) -> Any:
    if "__ndarray__" in value:
        return value["__ndarray__"].numpy()
    if "__numpy_scalar__" in value:
        return np.dtype(value["dtype"]).type(value["__numpy_scalar__"])
    if "__tuple__" in value:
        return tuple(_from_plain(item, budget) for item in value["__tuple__"])
    if "__dict__" in value:
        return {_from_plain(key, budget): _from_plain(item, budget) for key, item in value["__dict__"].items()}
    if "__build__" in value:
        kwargs, state = _from_plain(value["kwargs"], budget), _from_plain(value["state"], budget)
        return Build(_from_plain(value["__build__"], budget), kwargs, state)
    if "__optimizer__" in value:
        return Optimizer(value["__optimizer__"], _from_plain(value["defaults"], budget), value["module_arg"])
    if "__generator__" in value:
        return Seeded(value["__generator__"])
    if "__argref__" in value:
        return ArgRef(int(value["__argref__"]))
    if "__effect__" in value:
        return Effect(_from_plain(value["__effect__"], budget), bool(value["same"]))
    if "__unsupported__" in value:
        return Unsupported(_from_plain(str(value["__unsupported__"]), budget))
    return {_from_plain(key, budget): _from_plain(item, budget) for key, item in value.items()}


def dumps(value: Any) -> bytes:
    """Serialise a value made of the types above."""
    buffer = io.BytesIO()
    torch.save(_to_plain(value), buffer)
    return buffer.getvalue()


def loads(data: bytes, bounds: Bounds | None = None) -> Any:
    """Read back what `dumps` wrote; only tensors and plain data are accepted. With `bounds`, every
    text (strings, type names, keys) is cut to them, one answer's texts together to `bounds.total`."""
    plain = torch.load(io.BytesIO(data), weights_only=True, map_location="cpu")
    return _from_plain(plain, None if bounds is None else Budget(bounds))

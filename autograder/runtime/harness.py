"""The worker's side of a call: build the arguments, call the student, report back.

`call(request, resolve)` is used by the worker process and, unchanged, by the
in-process runner of the notebooks. `resolve("recurrence.rnn_forward")` returns
the student's object; the request and the response are plain data (see codec).
"""

import contextlib
import random
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from . import proxies
from .codec import ArgRef, Build, Effect, Optimizer, Seeded, Unsupported
from .seeds import seed_cpu
from .training import TARGETS as HARNESS_TARGETS
from .trusted import TRUSTED

Resolve = Callable[[str], Any]
MAX_MESSAGE = 2000
OPTIMIZERS = ("SGD", "Adam", "AdamW")
WATCHED_LAYERS = (nn.RNN, nn.GRU, nn.LSTM, nn.RNNCell, nn.GRUCell, nn.LSTMCell)


class UnimportableModule(Exception):
    """The student's module could not be imported (the worker answers with phase "import"; the grader
    raises student.ImportFailed from it)."""


@dataclass(frozen=True)
class Settings:
    """PyTorch's process-wide settings a call may change: every call starts from the defaults below (its threads
    aside), and the in-process runner puts back those it found."""

    threads: int
    grad: bool = True
    dtype: torch.dtype = torch.float32
    device: torch.device | None = None  # None: PyTorch's own, the CPU
    deterministic: tuple[bool, bool] = (False, False)  # torch.use_deterministic_algorithms: on, warn only
    anomaly: tuple[bool, bool] = (False, True)  # torch.autograd.set_detect_anomaly: on, check NaN

    @classmethod
    def current(cls) -> "Settings":
        device = torch.get_default_device()
        return cls(
            threads=torch.get_num_threads(),
            grad=torch.is_grad_enabled(),
            dtype=torch.get_default_dtype(),
            device=None if device == torch.device("cpu") else device,
            deterministic=_deterministic(),
            anomaly=(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()),
        )

    def apply(self) -> None:
        torch.set_default_dtype(self.dtype)
        torch.set_default_device(self.device)
        torch.set_grad_enabled(self.grad)
        torch.set_num_threads(self.threads)
        if _deterministic() != self.deterministic:  # only then: setting it imports and sets inductor's config (0.5 ms)
            torch.use_deterministic_algorithms(self.deterministic[0], warn_only=self.deterministic[1])
        torch.autograd.set_detect_anomaly(*self.anomaly)


def _deterministic() -> tuple[bool, bool]:
    return torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()


def reset_globals(seed: int, threads: int) -> None:
    """The same starting point for every call, whatever an earlier call changed."""
    Settings(threads).apply()
    seed_cpu(seed)
    random.seed(seed)
    np.random.seed(seed)


@contextlib.contextmanager
def kept_globals() -> Iterator[None]:
    """The block's changes to the globals `reset_globals` sets undone after it: the in-process runner calls the
    student in the notebook's (or the tests') own process, where a check that turned autograd off for its call
    would otherwise leave it off for every cell after (the worker needs none of this: each call resets them)."""
    settings = Settings.current()
    states = torch.random.get_rng_state(), random.getstate(), np.random.get_state()
    try:
        yield
    finally:
        settings.apply()
        torch.random.set_rng_state(states[0])
        random.setstate(states[1])
        np.random.set_state(states[2])


def build(spec: Build, resolve: Resolve) -> nn.Module:
    """A module from its description: a torch.nn layer, a trusted model, or the student's class."""
    if spec.path.startswith("trusted."):
        kind = TRUSTED[spec.path.removeprefix("trusted.")]
    elif spec.path.startswith("torch.nn."):
        kind = getattr(nn, spec.path.removeprefix("torch.nn."))
    else:
        kind = resolve(spec.path)
    module = kind(**spec.kwargs)
    if spec.state is not None:
        floats = {tensor.dtype for tensor in spec.state.values() if tensor.is_floating_point()}
        if len(floats) == 1:  # a float64 layer is rebuilt float64: loading its state alone would cast it to float32
            module.to(floats.pop())
        module.load_state_dict(spec.state)
    return module


def _materialise(args: list[Any], resolve: Resolve) -> list[Any]:
    built = [build(arg, resolve) if type(arg) is Build else arg for arg in args]
    for index, arg in enumerate(built):
        if type(arg) is Seeded:
            built[index] = torch.Generator().set_state(arg.state)
    for index, arg in enumerate(built):
        if type(arg) is Optimizer:
            if arg.name not in OPTIMIZERS:
                raise ValueError(f"optimizer {arg.name} is not allowed")
            built[index] = getattr(torch.optim, arg.name)(built[arg.module_arg].parameters(), **arg.defaults)
    return built


def _replace_modules(value: Any, modules: dict[int, nn.Module]) -> Any:
    for index, module in modules.items():
        if value is module:
            return ArgRef(index)
    if isinstance(value, nn.Module):
        return Unsupported(f"{type(value).__module__}.{type(value).__qualname__}")
    if type(value) in (list, tuple):
        return type(value)(_replace_modules(item, modules) for item in value)
    return value


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if type(value) in (list, tuple):
        return [tensor for item in value for tensor in _tensors(item)]
    return []


@contextlib.contextmanager
def watching_layers() -> Iterator[list[str]]:
    """Record every forward of PyTorch's recurrent layers made inside the block."""
    seen: list[str] = []
    originals = {layer: layer.forward for layer in WATCHED_LAYERS}

    def spy(layer: type, original: Callable[..., Any]) -> Callable[..., Any]:
        def forward(self: nn.Module, *args: Any, **kwargs: Any) -> Any:
            seen.append(f"nn.{layer.__name__}")
            return original(self, *args, **kwargs)

        return forward

    for layer, original in originals.items():
        layer.forward = spy(layer, original)
    try:
        yield seen
    finally:
        for layer, original in originals.items():
            layer.forward = original


@contextlib.contextmanager
def recording_grad_modes(modules: dict[int, nn.Module]) -> Iterator[dict[int, list[bool]]]:
    """For each module argument, whether autograd was on at each of its forward calls."""
    modes: dict[int, list[bool]] = {index: [] for index in modules}
    hooks = [
        module.register_forward_pre_hook(lambda *_, index=index: modes[index].append(torch.is_grad_enabled()))
        for index, module in modules.items()
    ]
    try:
        yield modes
    finally:
        for hook in hooks:
            hook.remove()


def _gradients(result: Any, args: list[Any], wrt: list[Any], cotangents: list[torch.Tensor]) -> list[Any]:
    outputs = _tensors(result)
    shapes = [tuple(tensor.shape) for tensor in outputs]
    wanted = [tuple(tensor.shape) for tensor in cotangents]
    if shapes != wanted:
        raise ValueError(f"cannot check gradients: the outputs have shapes {shapes}, expected {wanted}")
    if not any(tensor.requires_grad for tensor in outputs):
        raise ValueError("no gradient reaches the inputs: the outputs are detached from them")
    total = sum((tensor * cotangent).sum() for tensor, cotangent in zip(outputs, cotangents, strict=True))
    total.backward()
    grads: list[Any] = []
    for target in wrt:
        if isinstance(target, int):
            grads.append(args[target].grad)
        else:  # "params:K": the parameters of module argument K, by name
            module = args[int(target.split(":")[1])]
            grads.append({name: p.grad for name, p in module.named_parameters()})
    return grads


def call(request: dict[str, Any], resolve: Resolve, ask: proxies.Ask | None = None) -> dict[str, Any]:
    """Run one call as described by `request` and describe what happened; `ask` puts a question to the grader
    (the values of the stand-ins the request names)."""
    reset_globals(request.get("seed", 0), request.get("threads", 1))
    if request.get("autograd") is False:  # the grader asks what the call does with autograd off
        torch.set_grad_enabled(False)
    target = request["target"]
    function = HARNESS_TARGETS[target] if target in HARNESS_TARGETS else resolve(target)
    args = _materialise(list(request.get("args", [])), resolve)
    kwargs = dict(request.get("kwargs", {}))
    grad = request.get("grad")
    if grad:
        for index in (i for i in grad["wrt"] if isinstance(i, int)):
            args[index] = args[index].detach().clone().requires_grad_(True)
    modules = {index: arg for index, arg in enumerate(args) if isinstance(arg, nn.Module)}
    before = {index: dict(module.named_parameters()) for index, module in modules.items()}
    given = {} if target in HARNESS_TARGETS else _given_tensors(args)  # a training's data is the harness's own
    if target in HARNESS_TARGETS:
        args = [resolve, *args]
    standins = _standing_in(request, resolve, ask)  # other TODOs' functions, their values the grader's
    with watching_layers() as layers, recording_grad_modes(modules) as grad_modes, standins:
        result = function(*args, **kwargs)
    response: dict[str, Any] = {"ok": True, "layer_calls": sorted(set(layers))}
    response["grad_modes"] = {str(index): modes for index, modes in grad_modes.items()}
    if grad:
        response["grads"] = _gradients(result, args, grad["wrt"], grad["cotangents"])
    response["result"] = _replace_modules(result, modules)
    response["effects"] = {str(index): _effect(module, before[index]) for index, module in modules.items()}
    response["changed"] = [place for place, (tensor, copy) in given.items() if not _unchanged(tensor, copy)]
    return response


def _standing_in(
    request: dict[str, Any],
    resolve: Resolve,
    ask: proxies.Ask | None,
) -> contextlib.AbstractContextManager:
    """The named functions of other TODOs replaced, for this call, by proxies whose values the grader computes:
    no code or text of a correct one is ever in this process."""
    names = [str(name) for name in request.get("standins", [])]
    if not names:
        return contextlib.nullcontext()
    if ask is None:
        raise RuntimeError("this call names stand-ins, but nothing here can ask the grader for their values")
    return proxies.standing_in(names, resolve, ask)


def _given_tensors(args: list[Any]) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Each tensor argument (and each tensor of a tuple or list argument: an LSTM's (h, c)) with a copy of its
    values, by its place ("1" or "1.1"), to tell the caller's tensors changed in place (L3)."""
    given = {}
    for index, arg in enumerate(args):
        parts = enumerate(arg) if type(arg) in (tuple, list) else [(None, arg)]
        for part, value in parts:
            if isinstance(value, torch.Tensor):
                given[str(index) if part is None else f"{index}.{part}"] = (value, value.detach().clone())
    return given


def _unchanged(tensor: torch.Tensor, copy: torch.Tensor) -> bool:
    now = tensor.detach()
    return now.shape == copy.shape and now.dtype == copy.dtype and bool(torch.equal(now, copy) or _both_nan(now, copy))


def _both_nan(now: torch.Tensor, copy: torch.Tensor) -> bool:
    return now.is_floating_point() and bool(((now == copy) | (now.isnan() & copy.isnan())).all())


def _effect(module: nn.Module, before: dict[str, nn.Parameter]) -> Effect:
    after = dict(module.named_parameters())
    same = after.keys() == before.keys() and all(after[name] is before[name] for name in before)
    return Effect({name: tensor.detach().clone() for name, tensor in module.state_dict().items()}, same)


def describe_exception(error: BaseException, student_root: str) -> dict[str, Any]:
    """The exception as the student should see it: type, message, their own frames."""
    try:
        message = str(error)
    except BaseException:  # a student's __str__ may raise anything
        message = "<the exception's message could not be read>"
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if student_root and frame.filename.startswith(student_root)
    ]
    lines = [
        f'  File "{frame.filename.removeprefix(student_root).lstrip("/")}", line {frame.lineno}, in {frame.name}\n'
        f"    {(frame.line or '').strip()}"
        for frame in frames[-4:]
    ]
    return {
        "type": type(error).__name__,
        "message": message[:MAX_MESSAGE] + (" ..." if len(message) > MAX_MESSAGE else ""),
        "traceback": "\n".join(lines),
    }

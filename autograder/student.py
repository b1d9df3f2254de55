"""The grader's handle on a submission: call its functions, get plain results back.

`Remote` sends each call to the worker process; `InProcess` runs it here (for the
notebooks, where the student's code already runs in the kernel). Both take the
same arguments, turn modules, optimizers and generators into descriptions, and
return a `Call`: the value, what happened to module arguments, gradients, the
recurrent layers used and the output printed. Failures raise a `StudentError`
whose message is the feedback. A remote call's time covers the grader's reading of its
answer too: one read past the call's timeout or the grading's deadline ends as a timeout.
"""

import importlib
import re
import time
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from autograder.checks import errors
from autograder.checks.compare import CheckFailure, describe_type
from autograder.grading.submission import LeftOut
from autograder.rubric import Limits
from autograder.runtime import codec, harness, standins, trusted
from autograder.runtime.codec import ArgRef, Build, Effect, Optimizer, Refused, Seeded
from autograder.sandbox import Worker, WorkerDied, WorkerLimits
from autograder.scrub import Scrubber
from autograder.text import escaped

TODO_LABEL = re.compile(r"TODO \d+ · [^:]+")
DEATH_HINTS = {
    "timeout": "an endless loop, or far too much work?",
    "out of memory": "a tensor far larger than the inputs?",
    "disk full": "files written in a loop? Keep data in memory: nothing here needs a file.",
    "exit": "sys.exit, os._exit or a kill in your code?",
    "crash": "the Python process itself failed",
    "not started": (
        "not your code: the grader's worker did not start (a machine too busy, or the grader's own install), "
        "and the grading is tried again"
    ),
}
# a PermissionError is most often a system call the worker's layers refuse (seccomp.py, landlock.py): say which
REFUSED_WHILE_GRADING = (
    "While grading, your code may not use the network, share memory, queues, semaphores or keys with other "
    "processes (System V IPC, POSIX message queues, kernel keys), make namespaces, act on other processes or "
    "write outside its own folder: those calls are refused. None of this week's TODOs needs them."
)


class StudentError(Exception):
    """A call that did not return a value; str() is the feedback."""


class NotDone(StudentError):
    """The TODO still raises NotImplementedError."""


class Raised(StudentError):
    """The student's code raised an exception."""

    def __init__(self, message: str, error_type: str, error_message: str) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.error_message = error_message


class ImportFailed(StudentError):
    """The student's module could not be imported."""


class Died(StudentError):
    """The worker hung, crashed, exited, ran out of memory or filled its disk."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class Call:
    """What one call of the student's code gave back."""

    value: Any
    effects: dict[int, Effect] = field(default_factory=dict)
    grads: list[Any] | None = None
    layer_calls: list[str] = field(default_factory=list)
    grad_modes: dict[int, list[bool]] = field(default_factory=dict)
    output: str = ""
    changed: list[str] = field(default_factory=list)  # the tensor arguments changed in place: "1.1" is args[1][1]


# -- describing arguments -------------------------------------------------------------
RNN_KWARGS = ("input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout", "bidirectional")


def describe_module(module: nn.Module) -> Build:
    """How the other side rebuilds `module` (weights included)."""
    state = {name: tensor.detach().clone() for name, tensor in module.state_dict().items()}
    kind = type(module)
    if kind in (nn.RNN, nn.GRU, nn.LSTM):
        kwargs = {name: getattr(module, name) for name in RNN_KWARGS}
        if kind is nn.RNN:
            kwargs["nonlinearity"] = module.nonlinearity
        return Build(f"torch.nn.{kind.__name__}", kwargs, state)
    if kind.__name__ in trusted.TRUSTED and kind is trusted.TRUSTED[kind.__name__]:
        return Build(f"trusted.{kind.__name__}", _model_kwargs(module), state)
    if kind.__module__.startswith("solutions."):  # the reference's class -> the student's own
        return Build(f"{kind.__module__.removeprefix('solutions.')}.{kind.__name__}", _model_kwargs(module), state)
    raise TypeError(f"cannot send a {kind.__name__} to the worker")


def _model_kwargs(module: nn.Module) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "vocab": module.embedding.num_embeddings,
        "embed": module.embedding.embedding_dim,
        "hidden": module.rnn.hidden_size,
    }
    if hasattr(module, "pooling"):
        kwargs["cell"] = type(module.rnn).__name__.lower()
        kwargs["pooling"] = module.pooling
    return kwargs


def _describe_args(args: tuple[Any, ...]) -> list[Any]:
    described: list[Any] = []
    for arg in args:
        if isinstance(arg, nn.Module):
            described.append(describe_module(arg))
        elif isinstance(arg, torch.optim.Optimizer):
            described.append(_describe_optimizer(arg, args))
        elif isinstance(arg, torch.Generator):
            described.append(Seeded(arg.get_state()))
        elif isinstance(arg, torch.Tensor):
            described.append(arg.detach().clone())
        else:
            described.append(arg)
    return described


def _describe_optimizer(optimizer: torch.optim.Optimizer, args: tuple[Any, ...]) -> Optimizer:
    first = optimizer.param_groups[0]["params"][0]
    for index, arg in enumerate(args):
        if isinstance(arg, nn.Module) and any(p is first for p in arg.parameters()):
            defaults = {k: v for k, v in optimizer.defaults.items() if isinstance(v, (int, float, bool, tuple))}
            return Optimizer(type(optimizer).__name__, defaults, index)
    raise TypeError("an optimizer must be over the parameters of a module argument of the same call")


def _apply_effects(args: tuple[Any, ...], call: Call, target: str) -> None:
    """Load the states the call left into the grader's own module objects, each made sure of first: a student's
    code may replace a parameter, a changed runtime send anything."""
    for index, effect in call.effects.items():
        problem = _state_problem(effect.state, args[index].state_dict())
        if problem is not None:
            kind = type(args[index]).__name__
            raise CheckFailure(
                f"{_subject(target)} changed the {kind} it was given: {problem}. Keep its parameters' names and "
                "shapes: the grader loads what your code leaves in the module into its own copy."
            )
        with torch.no_grad():
            args[index].load_state_dict(effect.state)
    if type(call.value) is ArgRef:
        call.value = args[call.value.index]


def _state_problem(state: dict[str, Any], own: dict[str, torch.Tensor]) -> str | None:
    """What keeps `state` from loading into a module whose own state is `own` (its names, their shapes), or None.
    The student's names are not shown: the grader's own are."""
    if state.keys() != own.keys():
        missing = [name for name in own if name not in state]
        extra = len(state.keys() - own.keys())
        return f"its state leaves out {', '.join(missing)}" if missing else f"its state holds {extra} names more"
    for name, tensor in own.items():
        got = state[name]
        if type(got) is not torch.Tensor or got.shape != tensor.shape:
            shown = describe_type(got) if type(got) in (torch.Tensor, Refused) else "not a tensor"
            return f"its {name} is {shown}, not of shape {tuple(tensor.shape)}"
    return None


# -- turning failures into feedback ---------------------------------------------------
TRAINING_RUN = "the grader's training run over your code"
LOOPED = {"harness.train_steps": "train_step"}  # harness targets that only call one of the student's functions


def _subject(target: str) -> str:
    """How feedback names a call: the student's function, or the grader's training run over their code."""
    if target in LOOPED:
        return LOOPED[target]
    return TRAINING_RUN if target.startswith("harness.") else target.split(".", 1)[1]


def _failure(response: dict[str, Any], target: str, not_read: Mapping[str, LeftOut]) -> StudentError:
    error = response["error"]
    function = _subject(target)
    if response.get("phase") == "import" and response["module"] in not_read:
        left_out = not_read[response["module"]]  # the worker could not find it: say why it is not there
        return ImportFailed(f"{escaped(left_out.path)} was not read by the grader: {left_out.reason()}.")
    if response.get("phase") == "import":
        where = f"exercises/{response['module']}.py"
        text = f"{where} could not be imported: {error['type']}: {error['message']}"
        return ImportFailed(_with_traceback(text, error))
    if error["type"] == "MemoryError" or "can't allocate memory" in error["message"]:
        return Died(
            f"{function} ran out of memory: {error['message'][:200]}. {DEATH_HINTS['out of memory']}", "out of memory"
        )
    label = TODO_LABEL.search(error["message"]) if error["type"] == "NotImplementedError" else None
    if label:
        return NotDone(f"{label[0]} is not done yet: it still raises NotImplementedError.")
    feedback = _raised(function, error)
    if error["type"] == "PermissionError":
        feedback = f"{feedback}\n{REFUSED_WHILE_GRADING}"
    return Raised(feedback, error["type"], error["message"])


def _with_traceback(text: str, error: dict[str, Any]) -> str:
    return f"{text}\n{error['traceback']}" if error.get("traceback") else text


def _raised(function: str, error: dict[str, Any]) -> str:
    """The feedback of an exception the student's code raised. One whose PyTorch message the table of
    `checks.errors` explains shows that message cut short, the line of the student's file it came from (the
    last of their frames: the traceback holds theirs only), and what it means."""
    explanation = errors.explain(error["message"])
    if explanation is None:
        return _with_traceback(f"{function} raised {error['type']}: {error['message']}", error)
    where = error.get("traceback", "").splitlines()[-2:]  # a frame is two lines: file and line number, code
    headline = f"{function} raised {error['type']}: {errors.headline(error['message'])}"
    return "\n".join([headline, *where, f"{errors.MEANING}{explanation}"])


UNREADABLE = "The grader reads answers as its own runtime in the worker writes them: was it changed?"


def _unreadable(target: str, problem: str) -> Died:
    return Died(
        f"{_subject(target)} did not finish (crash): its answer could not be read: {problem}. {UNREADABLE}", "crash"
    )


def _form_problem(response: Any, args: tuple[Any, ...]) -> str | None:
    """What is wrong with the form of an answer (each part the grader reads, of the type the harness gives it),
    or None: the worker's runtime is the student's to change, so its answer may be any plain value."""
    if type(response) is not dict or type(response.get("ok")) is not bool:
        return f"it is a {type(response).__name__}, not the harness's answer"
    if not response["ok"]:
        error = response.get("error")
        texts = [error.get("type"), error.get("message"), error.get("traceback", "")] if type(error) is dict else [0]
        texts += [response.get("phase", ""), response.get("module", "")]
        return None if all(type(text) is str for text in texts) else "its error is not described as the harness does"
    wrong = _wrong_parts(response, {str(index) for index, arg in enumerate(args) if isinstance(arg, nn.Module)})
    return f"its {', '.join(wrong)} are not as the harness gives them" if wrong else None


def _wrong_parts(response: dict[str, Any], modules: set[str]) -> list[str]:
    """The parts of a call's answer that are not of their types (`modules`: the module arguments' places)."""
    effects, modes, result = response.get("effects", {}), response.get("grad_modes", {}), response.get("result")
    wrong = [part for part in ("layer_calls", "changed") if not _texts(response.get(part, []))]
    if (
        type(effects) is not dict
        or effects.keys() != modules
        or not all(type(effect) is Effect and type(effect.state) is dict for effect in effects.values())
    ):
        wrong.append("effects")
    if type(modes) is not dict or not modes.keys() <= modules or not all(map(_flags, modes.values())):
        wrong.append("grad_modes")
    if response.get("grads") is not None and type(response["grads"]) is not list:
        wrong.append("grads")
    if "result" not in response or (type(result) is ArgRef and str(result.index) not in modules):
        wrong.append("result")
    return wrong


def _texts(value: Any) -> bool:
    return type(value) is list and all(type(item) is str for item in value)


def _flags(value: Any) -> bool:
    return type(value) is list and all(type(item) is bool for item in value)


def _call_from(response: dict[str, Any], output: str) -> Call:
    return Call(
        value=response["result"],
        effects={int(index): effect for index, effect in response.get("effects", {}).items()},
        grads=response.get("grads"),
        layer_calls=response.get("layer_calls", []),
        grad_modes={int(index): modes for index, modes in response.get("grad_modes", {}).items()},
        output=output,
        changed=list(response.get("changed", [])),
    )


def _request(
    target: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    seed: int,
    grad: Any,
    threads: int = 1,
    standins: tuple[str, ...] = (),
    autograd: bool = True,
) -> dict[str, Any]:
    request = {"target": target, "args": _describe_args(args), "kwargs": kwargs, "seed": seed, "threads": threads}
    if not autograd:  # the call made as under torch.no_grad(): what a function that forgot it would have done
        request["autograd"] = False
    if standins:  # other TODOs' functions stood in for: the worker asks the grader for their values (no code)
        request["standins"] = list(standins)
    if grad is not None:
        wrt, cotangents = grad
        request["grad"] = {"wrt": list(wrt), "cotangents": [c.detach().clone() for c in cotangents]}
    return request


def _answerer(request: dict[str, Any], max_bytes: int) -> Callable[[Any], dict[str, Any]] | None:
    """What answers the worker's questions during this call: the values of the stand-ins it names, computed by the
    grader (None: the call names none, and a question is refused)."""
    names = tuple(request.get("standins", ()))
    return None if not names else lambda question: standins.answer(question, names, max_bytes)


class Runner:
    """What both ways of running share: describe the call, answer it, turn the answer into a Call."""

    threads = 1  # torch threads per call
    scrubber: Scrubber | None = None  # withholds quotes of the grader's files from what the student's code says
    not_read: Mapping[str, LeftOut] = types.MappingProxyType({})  # module -> why the grader did not copy it

    def run(
        self,
        target: str,
        *args: Any,
        seed: int = 0,
        grad: tuple[list[Any], list[torch.Tensor]] | None = None,
        timeout: float | None = None,
        standins: tuple[str, ...] = (),
        autograd: bool = True,
        **kwargs: Any,
    ) -> Call:
        """Call `target` ("module.function") with `args`; raise StudentError when it fails. `standins`: the
        student's functions ("padding.masked_mean") replaced by correct ones during the call; `autograd=False`:
        the call made with autograd off."""
        request = _request(target, args, kwargs, seed, grad, self.threads, standins, autograd)
        response, output = self._answer(request, timeout)
        response = self.scrub(response)
        self._in_time(target)
        problem = _form_problem(response, args)
        if problem is not None:
            raise _unreadable(target, problem)
        if not response.get("ok"):
            raise _failure(response, target, self.not_read)
        call = _call_from(response, output)
        _apply_effects(args, call, target)
        return call

    def _answer(self, request: dict[str, Any], timeout: float | None) -> tuple[dict[str, Any], str]:
        raise NotImplementedError

    def fresh(self, preload: tuple[str, ...] | None = None) -> None:
        """The next call runs in a new process with the student's modules imported anew (nothing that an
        earlier call, or an import, left behind in the old one answers it); `preload`: the modules its calls
        need warm (None: all the rubric's; () for forwards only). In process: nothing to renew."""

    def scrub(self, value: Any) -> Any:
        """Every text in `value` that came from the student's side, without quotes of the grader's files."""
        return value if self.scrubber is None else self.scrubber.value(value)

    def _in_time(self, target: str) -> None:
        """Raise Died when the grader's own work on the answer ran past the call's time (no limit here)."""


class Remote(Runner):
    """Calls run in the worker process."""

    def __init__(
        self,
        worker: Worker,
        deadline: float | None = None,
        limits: Limits | None = None,
        scrubber: Scrubber | None = None,
        not_read: dict[str, LeftOut] | None = None,
    ) -> None:
        self.worker = worker
        self.scrubber = scrubber
        self.call_timeout = (limits or Limits()).call_timeout  # when a check names no timeout of its own
        self.not_read = not_read or {}
        self.deadline = deadline  # time.monotonic() by which the whole grading must end
        self.transcript: list[str] = []  # what the student's code printed, call by call
        self.call_seconds = 0.0  # the current call's timeout

    def _answer(self, request: dict[str, Any], timeout: float | None) -> tuple[dict[str, Any], str]:
        target = request["target"]
        timeout = self.call_timeout if timeout is None else timeout
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 1:
                raise Died("The time for the whole grading ran out before this item could run.", "timeout")
            timeout = min(timeout, left)
        self.call_seconds = timeout
        try:
            response = self.worker.request(request, timeout, _answerer(request, self.worker.limits.response_bytes))
        except WorkerDied as death:
            self._keep_output()
            hint = DEATH_HINTS.get(death.kind, "")
            if death.kind == "timeout" and _subject(target) == TRAINING_RUN:
                hint = "The recipe takes a few seconds with vectorised code; a Python loop over rows is far too slow."
            message = f"{_subject(target)} did not finish ({death.kind}): {death.detail}. {hint}"
            raise Died(message, death.kind) from None
        except codec.Unreadable as unreadable:  # an archive torch.save would not write: nothing of it is read
            self._keep_output()
            raise _unreadable(target, str(unreadable)) from None
        return response, self._keep_output()

    def _in_time(self, target: str) -> None:
        """The call's timeout and the grading's deadline hold the grader's reading of the answer too (its
        decoding and scrubbing): past either, the call ends as a timeout, whatever it answered."""
        now = time.monotonic()
        if self.deadline is not None and now > self.deadline:
            detail = "the time for the whole grading ran out before its answer was read"
        elif now > self.worker.answer_by:
            detail = f"the grader's reading of its answer ran past the call's {self.call_seconds:g} s"
        else:
            return
        hint = "An answer far larger than the task asks for?"
        raise Died(f"{_subject(target)} did not finish (timeout): {detail}. {hint}", "timeout")

    def fresh(self, preload: tuple[str, ...] | None = None) -> None:
        self.worker.renew(preload)  # the next request starts a new worker, layers and all

    def _keep_output(self) -> str:
        """The call's output, scrubbed, added to the transcript."""
        self.transcript.append(self.scrub(self.worker.output.decode("utf-8", "replace")))
        return self.transcript[-1]


class InProcess(Runner):
    """Calls run in this process, on a namespace of student objects (a notebook's globals)."""

    def __init__(self, namespace: dict[str, Any] | types.ModuleType | Callable[[str], Any], threads: int = 1) -> None:
        self.resolve = namespace if callable(namespace) else _namespace_resolver(namespace)
        self.threads = threads  # grading always uses 1

    def _answer(self, request: dict[str, Any], timeout: float | None) -> tuple[dict[str, Any], str]:
        request = codec.loads(codec.dumps(request))  # the same copies and checks as across processes
        answer = _answerer(request, WorkerLimits().response_bytes)
        ask = None if answer is None else _crossing(answer)
        try:
            with harness.kept_globals():  # this process's grad mode, dtype, threads and seeds, as they were
                return codec.loads(codec.dumps(harness.call(request, self.resolve, ask))), ""
        except Exception as error:
            return {"ok": False, "phase": "call", "error": harness.describe_exception(error, "")}, ""


def _crossing(answer: Callable[[Any], dict[str, Any]]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """`answer` with the question and its reply copied through the codec, as they are between processes."""
    return lambda question: codec.loads(codec.dumps(answer(codec.loads(codec.dumps(question)))))


def in_package(package: str) -> Callable[[str], Any]:
    """A resolver over a package of exercise modules: in_package("solutions")("classifier.train_step")."""

    def resolve(dotted: str) -> Any:
        module, *path = dotted.split(".")
        value = importlib.import_module(f"{package}.{module}")
        for name in path:
            value = getattr(value, name)
        return value

    return resolve


def _namespace_resolver(namespace: dict[str, Any] | types.ModuleType) -> Callable[[str], Any]:
    values = vars(namespace) if isinstance(namespace, types.ModuleType) else namespace

    def resolve(dotted: str) -> Any:
        _, *attributes = dotted.split(".")  # the module part names the notebook
        value = values[attributes[0]]
        for attribute in attributes[1:]:
            value = getattr(value, attribute)
        return value

    return resolve

"""What the public tests share: fixed seeds, a run that pays for the tests alone, and naming a known mistake.

Every test starts from torch.manual_seed(0), so a failure repeats exactly. The run uses one thread and leaves
unimported what torch would load for no test here (see pytest_configure), so it takes a few seconds.

`mistakes.json` (written when the course releases this repository) holds, for some tests,
what the function under test returns on that test's inputs when it has one of the course's
common mistakes: numbers only, computed from the test's own inputs. While such a test runs,
the calls to that function (`recurrence.rnn_forward(...)`, `model(...)` for the classifier)
are watched. When the test fails and every call returned what one mistake (or several mistakes
made together in that function) returns, the failure starts with each mistake's id and the lesson
to reread, as the grader's feedback does:

    [G1] Your final states equal output[:, -1]: ... Gather at lengths - 1.
      Reread: Day 4, "Packing is not an optimisation".

A failing test that blames another TODO's function first ("masked_mean (padding.py) is wrong ...") called
it, and that function fails its own tests. An error PyTorch raised (a view of transposed memory, two
dtypes mixed, an in-place change autograd needed) ends with the line of your exercises/ file it came
from and what it means, in the words of the grader's feedback (the table in `mistakes.json`).

A function whose TODO is not written yet fails each of its tests in one line, the TODO and where its stub
raised (`TODO 3 · packing: not implemented yet (exercises/padding.py, line 39, in encode_packed)`), without
the traceback, which would show only the stub's docstring.

Nothing here changes whether a test passes.
"""

import contextlib
import functools
import gc
import importlib
import importlib.util
import inspect
import json
import math
import operator
import re
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def collector_off() -> Iterator[None]:
    """No garbage collection in the block, then as before. Importing torch (and, collecting, scikit-learn and your
    modules) makes a few hundred thousand objects, none of them garbage: the collector would walk them again and
    again (about a fifth of a second each)."""
    collector_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collector_on:
            gc.enable()


with collector_off():
    import numpy as np
    import pytest
    import torch
    from torch import nn

MISTAKES = Path(__file__).resolve().parent / "mistakes.json"
PACKAGE = Path(__file__).resolve().parents[1]  # exercises/: the student's modules, beside these tests
MEANING = "What this means: "  # how an explained error's last line starts, as in the grader's feedback
ATOL, RTOL = 1e-5, 1e-4  # as the tests' assert_close
DIGITS = 8  # significant digits kept of a number


@functools.cache
def known() -> dict[str, Any]:
    """The released values: {"mistakes": {key: feedback}, "tests": {test id: {...}}, "errors": [[pattern,
    explanation], ...]}, or nothing.

    A test's distinct call inputs are stored once ("inputs"), each call naming its own by index; the
    feedback is stored per mistake ("R1:hh"), a combination's ("R1:hh+R6") being its parts', a line each.
    """
    if not MISTAKES.exists():
        return {"mistakes": {}, "tests": {}, "errors": []}
    return json.loads(MISTAKES.read_text(encoding="utf-8"))


def test_id(item: pytest.Item) -> str:
    """'test_padding::test_gather_final_matches_the_row_by_row_definition' (with [params] when parametrized)."""
    return f"{item.path.stem}::{item.name}"


def seed() -> None:
    """Each test starts from the same random numbers. The public tests run on the CPU, so its generator alone
    is seeded: torch.manual_seed would also queue a seeding of every accelerator, formatting the stack for each."""
    torch.default_generator.manual_seed(0)


@pytest.fixture(autouse=True)
def fixed_seed() -> None:
    seed()


# -- what a run costs: the tests' own work, not torch's machinery ---------------------------------------------
def pytest_configure(config: pytest.Config) -> None:
    """One thread, and nothing imported that no test needs. The tests' tensors are tiny: a pool of a thread per
    core gains nothing on them and spins waiting between operations (a third of a run's CPU, and its wall time
    on a busy machine); the grader and the release's recording of the mistakes run one thread too."""
    torch.set_num_threads(1)
    _compare_without_importing_dtensor()
    _train_without_importing_dynamo()


def _compare_without_importing_dtensor() -> None:
    """torch.testing.assert_close asks whether it was given DTensors by importing torch.distributed.tensor (and
    sympy with it: about a second, at the first comparison). No DTensor exists before that module is imported: till
    then the answer is no without the import; after it, torch's own check. The comparison itself is torch's."""
    comparison = sys.modules.get("torch.testing._comparison")
    unwrap = getattr(comparison, "_unwrap_dtensor_for_comparison", None)
    if unwrap is None or getattr(unwrap, "imports_nothing", False):  # another torch's way, or done already
        return

    def unwrapped(actual: Any, expected: Any) -> tuple[Any, Any]:
        if "torch.distributed.tensor" not in sys.modules:
            return actual, expected
        return unwrap(actual, expected)

    unwrapped.imports_nothing = True
    comparison._unwrap_dtensor_for_comparison = unwrapped


def _train_without_importing_dynamo() -> None:
    """torch's optimizers import torch._dynamo at every step (about a second, the first time) for a graph break
    that does nothing outside torch.compile. The training check's stand-in (exercises/check_training/dynamo.py,
    the grader's own) answers in its place, and imports the real module as soon as anything else asks for it."""
    try:
        from exercises.check_training import dynamo
    except Exception:  # no training check beside these tests: the real module, when an optimizer steps
        return
    dynamo.install()


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[None]:
    """Collecting imports scikit-learn and your modules: with the garbage collector off too (`collector_off`). What
    it imported lives to the end: frozen, it is not walked again by each of the garbage collections pytest makes at
    the session's end (five, to catch an exception raised where an object is deleted; about a second). What the
    tests make is collected as before: the collector is on again when they run."""
    with collector_off():
        try:
            return (yield)
        finally:
            gc.freeze()


# -- what a call gave: plain numbers, compared with a tolerance --------------------------------
def number(value: float) -> float | str:
    if math.isnan(value) or math.isinf(value):
        return str(value)
    return float(f"{value:.{DIGITS}g}")


def plain(value: Any) -> Any:
    """A JSON-ready copy of a returned value: tensors, arrays, numbers, sequences; a module by its fingerprint."""
    if isinstance(value, nn.Module):
        return summary(value)
    if isinstance(value, (torch.Tensor, np.ndarray)):
        kind = {} if torch.as_tensor(value).is_floating_point() else {"kind": "integer"}  # counts as integers (B3)
        if isinstance(value, torch.Tensor) and value.requires_grad and value.grad_fn is None:
            kind["leaf"] = 1  # made from numbers with requires_grad=True: no graph behind it (S6)
        array = torch.as_tensor(value).detach().double().cpu()
        return {"shape": list(array.shape), "values": [number(v) for v in array.flatten().tolist()], **kind}
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bool, int)):
        return int(value)
    if isinstance(value, float):
        return number(value)
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return type(value).__name__


def summary(value: Any) -> Any:
    """A short fingerprint of an argument, to tell whether two calls got the same inputs."""
    if isinstance(value, nn.Module):
        return [summary(tensor) for tensor in value.state_dict().values()]
    if isinstance(value, (torch.Tensor, np.ndarray)):
        array = torch.as_tensor(value).detach().double().cpu()
        return [list(array.shape), number(float(array.sum())), number(float(array.abs().sum()))]
    if isinstance(value, torch.Generator):
        return summary(value.get_state())
    if isinstance(value, (list, tuple)):
        return [summary(item) for item in value]
    return plain(value)


def same(a: Any, b: Any) -> bool:
    """Equal structure, and numbers equal within the tests' tolerance."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=RTOL, abs_tol=ATOL)
    return a == b


# -- watching the function under test ---------------------------------------------------------
def owner_of(target: str) -> tuple[Any, str]:
    """'classifier.SequenceClassifier.forward' -> (the class, 'forward')."""
    module, *path = target.split(".")
    found = importlib.import_module(f"exercises.{module}")
    for name in path[:-1]:
        found = getattr(found, name)
    return found, path[-1]


def _modules(function: Callable[..., Any], args: tuple, kwargs: dict) -> list[nn.Module]:
    """The modules a call is given (set_forget_bias and train_step change theirs in place; sample runs its model)."""
    try:
        bound = inspect.signature(function).bind_partial(*args, **kwargs)
    except (TypeError, ValueError):  # a signature other than the stub's: the call itself will say so
        return [value for value in [*args, *kwargs.values()] if isinstance(value, nn.Module)]
    return [value for value in bound.arguments.values() if isinstance(value, nn.Module)]


def _changes(modules: list[nn.Module], before: list[list[nn.Parameter]]) -> list[Any]:
    """Each module after the call, and whether it still holds the very Parameter objects it held before."""
    return [
        [summary(module), len(before[i]) == len(after) and all(map(operator.is_, before[i], after))]
        for i, (module, after) in enumerate((module, list(module.parameters())) for module in modules)
    ]


@contextlib.contextmanager
def watching(target: str, in_place: bool, replacement: Callable[..., Any] | None = None) -> Iterator[list[dict]]:
    """Record every call of `target` made inside the block: its inputs, and what it returned or raised.

    With `replacement`, the calls go to it instead (how the course computes a mistake's values).
    """
    owner, name = owner_of(target)
    original = getattr(owner, name)
    calls: list[dict] = []

    def watched(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # a failure's traceback goes from the test to your code, not through this
        call = {"inputs": summary([args, sorted(kwargs.items())])}
        calls.append(call)
        given = _modules(original, args, kwargs)
        modules = given if in_place else []
        before = [list(module.parameters()) for module in modules]
        tensors = _tensors(args, kwargs)
        copies = [tensor.detach().clone() for tensor in tensors]
        try:
            with _grad_modes(given) as modes:
                result = (replacement or original)(*args, **kwargs)
        except Exception as error:
            call["raised"] = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
            raise
        if any(modes):  # a model given was run with autograd on (sampling without no_grad: T5)
            call["autograd"] = 1
        call["returned"] = plain(result)
        if in_place:
            call["changed"] = _changes(modules, before)
        mutated = [
            number for number, (tensor, copy) in enumerate(zip(tensors, copies, strict=True)) if _differ(tensor, copy)
        ]
        if mutated:  # the caller's own tensors changed in place (L3)
            call["mutated"] = mutated
        return result

    setattr(owner, name, watched)
    try:
        yield calls
    finally:
        setattr(owner, name, original)


def _tensors(args: tuple, kwargs: dict) -> list[torch.Tensor]:
    """The tensors a call is given, those inside a tuple or list (an LSTM's (h, c)) too, in order."""
    found = []
    for value in [*args, *kwargs.values()]:
        for part in value if isinstance(value, (tuple, list)) else [value]:
            if isinstance(part, torch.Tensor):
                found.append(part)
    return found


def _differ(tensor: torch.Tensor, copy: torch.Tensor) -> bool:
    now = tensor.detach()
    return now.shape != copy.shape or now.dtype != copy.dtype or not torch.equal(now.nan_to_num(), copy.nan_to_num())


@contextlib.contextmanager
def _grad_modes(modules: list[nn.Module]) -> Iterator[list[bool]]:
    """Whether autograd was on at each call of the modules given, made inside the block."""
    modes: list[bool] = []
    hooks = [module.register_forward_pre_hook(lambda *_: modes.append(torch.is_grad_enabled())) for module in modules]
    try:
        yield modes
    finally:
        for hook in hooks:
            hook.remove()


def diagnosis(calls: list[dict], entry: dict[str, Any]) -> str | None:
    """The first mistake (or combination) whose recorded calls the watched calls repeat one for one."""
    for key, expected in entry["mistakes"].items():
        if len(calls) == len(expected) and all(
            _repeats(call, wanted, entry["inputs"]) for call, wanted in zip(calls, expected, strict=True)
        ):
            return feedback(key)
    return None


def feedback(key: str) -> str:
    """The feedback naming a mistake, or each mistake of a combination ("C2+C3+C4"), a line each."""
    return "\n".join(known()["mistakes"][part] for part in key.split("+"))


def _repeats(call: dict, recorded: dict, inputs: list[Any]) -> bool:
    return same(call["inputs"], inputs[recorded["inputs"]]) and all(
        same(call.get(part), recorded.get(part)) for part in ("returned", "raised", "changed", "autograd", "mutated")
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """On a failure whose calls repeat a known mistake's, lead the message with the mistake; before it, say
    which function of another TODO that the test called fails its own tests."""
    entry = known()["tests"].get(test_id(item)) or {"function": None}
    watched = watching(entry["function"], entry["in_place"]) if entry["function"] else contextlib.nullcontext([])
    try:
        with watched as calls, calling_helpers(item.path.stem[5:]) as called:
            return (yield)
    except Exception as failure:  # the helpers are theirs again: their own tests may run
        stub = untouched_stub(failure)
        if stub is None:
            named = diagnosis(calls, entry) if entry["function"] else None
            helpers = [] if isinstance(failure, NotImplementedError) else wrong_helpers(called)
            meaning = explained(failure)
            if named is not None or helpers or meaning:
                message = str(failure.args[0]) if failure.args else ""
                failure.args = ("\n".join([*helpers, *filter(None, [named, message]), *meaning]), *failure.args[1:])
            raise
    # Nothing written yet: one line, out of the except block so that no chained exception is shown either (the
    # traceback would show only the stub and its docstring).
    pytest.fail(stub, pytrace=False)


# -- another TODO's function that the tested code uses, wrong by its own tests ------------------------------
HELPERS = ("padding.gather_final", "padding.masked_mean")  # the other TODOs' functions a module may use
SECTION = re.compile(r"^#\s*-+\s*TODO · ([\w.]+)", re.MULTILINE)  # a public test file's TODO sections, by function


def wrong_helpers(called: set[str]) -> list[str]:
    """A line for each function of another TODO that the failed test called whose own plain tests fail: the
    test may fail because of it. One it did not call is not blamed, however wrong."""
    return [
        f"{target.split('.')[1]} ({target.split('.')[0]}.py) is wrong: {own}; fix it first, this test uses it"
        for target in HELPERS
        if target in called and (own := own_failure(target)) is not None
    ]


@contextlib.contextmanager
def calling_helpers(module: str) -> Iterator[set[str]]:
    """Record which functions of other TODOs (HELPERS) the block calls: through their own module (`padding.
    masked_mean(...)`) or through a name `module` imported them under (`from exercises.padding import ...`)."""
    called: set[str] = set()
    bindings = [(namespace, name, target) for target in HELPERS for namespace, name in _bindings(module, target)]
    originals = [getattr(namespace, name) for namespace, name, _ in bindings]
    for (namespace, name, target), original in zip(bindings, originals, strict=True):
        setattr(namespace, name, _noting(original, target, called))
    try:
        yield called
    finally:
        for (namespace, name, _), original in zip(bindings, originals, strict=True):
            setattr(namespace, name, original)


def _bindings(module: str, target: str) -> list[tuple[Any, str]]:
    """Where code of `module` finds the function `target` of another module: (namespace, name) pairs."""
    owner_name, name = target.split(".")
    if module == owner_name:
        return []  # a function of the tested module's own TODOs is not another TODO's helper
    try:
        tested, owner = (importlib.import_module(f"exercises.{m}") for m in (module, owner_name))
    except Exception:  # a module that does not import: its own tests say so
        return []
    function = getattr(owner, name, None)
    if not callable(function):
        return []
    return [(owner, name)] + [(tested, key) for key, value in vars(tested).items() if value is function]


def _noting(function: Callable[..., Any], target: str, called: set[str]) -> Callable[..., Any]:
    @functools.wraps(function)
    def noted(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        called.add(target)
        return function(*args, **kwargs)

    return noted


@functools.cache
def own_failure(target: str) -> str | None:
    """The first failure of the target's own public tests (those its TODO's section holds that take no
    arguments), as "test: first line", or None when they pass."""
    module, function = target.split(".")
    path = Path(__file__).with_name(f"test_{module}.py")
    text = path.read_text(encoding="utf-8")
    lines = [(text.count("\n", 0, match.start()) + 1, match[1]) for match in SECTION.finditer(text)]
    spec = importlib.util.spec_from_file_location(f"public_{module}_helpers", path)
    tests = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tests)
    for name, test in vars(tests).items():
        if not name.startswith("test") or not inspect.isfunction(test) or inspect.signature(test).parameters:
            continue
        above = [todo for line, todo in lines if line < test.__code__.co_firstlineno]
        if above and above[-1] == function:
            seed()
            try:
                test()
            except Exception as error:
                return f"{name}: {(str(error).splitlines() or [type(error).__name__])[0].rstrip('.')}"
    return None


# -- a TODO not written yet -------------------------------------------------------------------------------
STUB = re.compile(r"TODO \d+ · [^:\n]+: not implemented yet")  # what a stub raises until its TODO is written


def untouched_stub(failure: BaseException) -> str | None:
    """The line a stub's own NotImplementedError, raised in the student's exercises/ file, fails with (`TODO 3 ·
    packing: not implemented yet (exercises/padding.py, line 39, in encode_packed)`); None for any other failure."""
    if not isinstance(failure, NotImplementedError) or not STUB.fullmatch(str(failure)):
        return None
    frame = students_frame(failure)
    if frame is None:
        return None
    return f"{failure} ({_relative(frame.filename)}, line {frame.lineno}, in {frame.name})"


# -- an error PyTorch raised in the student's code, in the grader's words ---------------------------------
def explained(failure: BaseException) -> list[str]:
    """For an error the released table explains (PyTorch's, never a failed assertion): the line of the student's
    exercises/ file it came from, when the traceback passes there, and what it means."""
    if isinstance(failure, AssertionError):
        return []
    try:
        meaning = explain(str(failure))
    except Exception:  # an exception class of the student's whose message cannot be read: nothing to explain
        return []
    return [] if meaning is None else [*students_line(failure), MEANING + meaning]


def explain(message: str) -> str | None:
    """The explanation of the first row of the table whose pattern the message matches, its groups filled in."""
    for pattern, text in known().get("errors", []):
        match = re.search(pattern, message)
        if match:
            return text.format(**match.groupdict())
    return None


def students_line(failure: BaseException) -> list[str]:
    """The last frame of the traceback in the student's exercises/ modules (not these tests), as Python shows it."""
    frame = students_frame(failure)
    if frame is None:
        return []  # raised in a test's own line: autograd's backward, after the student's function returned
    where = _relative(frame.filename)
    return [f'  File "{where}", line {frame.lineno}, in {frame.name}', f"    {(frame.line or '').strip()}"]


def students_frame(failure: BaseException) -> traceback.FrameSummary | None:
    """The last frame of the failure's traceback in the student's exercises/ modules, or None."""
    frames = [frame for frame in traceback.extract_tb(failure.__traceback__) if _students(frame.filename)]
    return frames[-1] if frames else None


def _relative(filename: str) -> str:
    return Path(filename).resolve().relative_to(PACKAGE.parent).as_posix()


def _students(filename: str) -> bool:
    path = Path(filename).resolve()
    return path.is_relative_to(PACKAGE) and not path.is_relative_to(PACKAGE / "tests")

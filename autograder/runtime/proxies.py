"""The worker's side of a regrade with correct helpers: stand-ins that hold no answer, only a question.

When the classifier's forward fails and the student's `gather_final` or `masked_mean` fails its own item
too, the grader grades forward again with correct helpers in their place. Nothing of those helpers enters
the worker: each name of the student's package bound to one of them is bound, for that call only, to a
proxy that sends its tensors to the grader and returns the value the grader computed with its own code
(runtime/standins.py, which never leaves the grader). A forward that reads the proxy finds this file,
which the student may read anyway. The values carry no gradient: the forward items judge values.
"""

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Any

import torch

Ask = Callable[[dict[str, Any]], dict[str, Any]]  # one question to the grader, its reply


class Refused(TypeError):
    """The grader would not compute the stand-in's value for these arguments (its reason is the message)."""


def proxy(name: str, ask: Ask) -> Callable[..., torch.Tensor]:
    """A function that asks the grader for `name`'s value ("padding.gather_final") on the arguments it gets."""

    def stand_in(*args: Any) -> torch.Tensor:
        sent = [arg.detach() if isinstance(arg, torch.Tensor) else arg for arg in args]
        reply = ask({"ask": name, "args": sent})
        if "answer" not in reply:
            raise Refused(str(reply.get("refused", "the grader gave no value")))
        return reply["answer"]

    stand_in.__name__ = stand_in.__qualname__ = name.rsplit(".", 1)[-1]
    return stand_in


@contextlib.contextmanager
def standing_in(names: list[str], resolve: Callable[[str], Any], ask: Ask) -> Iterator[None]:
    """Inside the block, every name of the student's package bound to one of the named functions (the module's
    own, and any `from ... import` of it) is bound to its proxy instead."""
    own = {name: _resolved(resolve, name) for name in names}
    proxies = {id(value): proxy(name, ask) for name, value in own.items() if value is not None}
    packages = {str(getattr(value, "__module__", "")).split(".")[0] for value in own.values() if value is not None}
    replaced: list[tuple[Any, str, Any]] = []
    for module_name, module in list(sys.modules.items()) if proxies else []:
        if module_name.split(".")[0] in packages and module is not None:
            for attribute, value in list(vars(module).items()):
                if id(value) in proxies:
                    replaced.append((module, attribute, value))
                    setattr(module, attribute, proxies[id(value)])
    try:
        yield
    finally:
        for module, attribute, value in reversed(replaced):
            setattr(module, attribute, value)


def _resolved(resolve: Callable[[str], Any], name: str) -> Any:
    """The student's function, or None when there is none to replace (not written, or not importable)."""
    try:
        return resolve(name)
    except Exception:
        return None

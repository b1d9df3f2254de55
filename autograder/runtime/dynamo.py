"""torch._dynamo left unimported until something compiles: a stand-in for what eager training asks of it.

torch's optimizers import torch._dynamo at every step, to mark graph breaks, and `torch._disable_dynamo`
(on zero_grad, state_dict, ...) imports it at the first call, to wrap the function. Outside torch.compile
both are no-ops, yet the import (sympy, the FX tracer, ...) costs over a second of CPU in each process
that trains: the grader's, and every worker's. Nothing here compiles, so `install()` puts a stand-in in
its place that answers those two (`graph_break`: nothing; `disable`: the function itself) and, on any
other use (torch.compile, `torch._dynamo.config`, ...), imports the real module in its place and hands
the question on. Standard library and torch only: the worker imports it as part of the runtime.
"""

import importlib
import sys
import types
from collections.abc import Callable
from typing import Any

NAME = "torch._dynamo"


class StandIn(types.ModuleType):
    """torch._dynamo until something other than a graph break or a disable asks for it."""

    @staticmethod
    def graph_break() -> None:
        """Not compiling (the real module is not even loaded): nothing to break."""

    @staticmethod
    def disable(fn: Callable | None = None, recursive: bool = True, **options: Any) -> Callable:
        """Not compiling: the function itself (as a decorator without `fn`, the identity)."""
        return fn if fn is not None else (lambda function: function)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name != "__path__":  # a probe, not a use: inspect and pytest look for
            raise AttributeError(name)  # every module's __file__ when they show a traceback
        return getattr(real(), name)  # __path__ too: `import torch._dynamo.utils` needs the real package


def install() -> bool:
    """Put the stand-in in torch._dynamo's place, unless the real module is loaded already; True if it is there."""
    import torch

    loaded = sys.modules.get(NAME)
    if loaded is None:
        loaded = sys.modules[NAME] = StandIn(NAME, __doc__)
        torch._dynamo = loaded  # `import torch._dynamo` finds sys.modules' entry, then reads the attribute
    return isinstance(loaded, StandIn)


def real() -> types.ModuleType:
    """The real torch._dynamo, imported in the stand-in's place (once)."""
    import torch

    if isinstance(sys.modules.get(NAME), StandIn):
        del sys.modules[NAME]
        torch._dynamo = importlib.import_module(NAME)
    return sys.modules[NAME]

# Attack "search_expected" (tests/attacks): sample searches the environment, the garbage collector and the filesystem for the reference.
# Appended to the base module: these definitions replace its own of the same names.
import os

import torch
from torch import nn

# -- the attack ---------------------------------------------------------------------------
ATTACK = "@@NAME@@"


def _escape(what: str) -> None:
    """Try to leave a trace outside the grading directory; the test checks that none is left."""
    for path in ("@@MARK@@", "@@PARENT@@/escaped-@@NAME@@"):
        if path.startswith("@@"):
            continue  # placeholders not filled in: not built by tests/attacks, so write nothing
        try:
            with open(path, "a") as trace:
                trace.write(f"written by the attack {ATTACK}: {what}\n")
        except OSError:
            pass


_found = None


WANTED = os.path.join("solutions", "language_model.py")


def _load(path):
    namespace = {"__name__": "found"}
    with open(path) as file:
        exec(compile(file.read(), path, "exec"), namespace)
    return namespace["sample"]


def _search():
    """The reference's sample, found anywhere it can be: None when it cannot."""
    import collections
    import gc
    import time
    import types

    # 1. the environment: any variable naming a folder that holds the reference
    for value in os.environ.values():
        for part in value.split(os.pathsep):
            if os.path.isfile(os.path.join(part, WANTED)):
                return _load(os.path.join(part, WANTED))
    # 2. memory: a function called sample that is not this one, or a dict of expected values
    for thing in gc.get_objects():
        if isinstance(thing, types.FunctionType) and thing.__name__ == "sample" and thing.__code__.co_argcount == 5:
            if thing.__module__ not in (__name__, "exercises.language_model"):
                return thing
    # 3. other processes' working directories (the grader's, for instance)
    for pid in os.listdir("/proc") if os.path.isdir("/proc") else []:
        try:
            folder = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if os.path.isfile(os.path.join(folder, WANTED)):
            return _load(os.path.join(folder, WANTED))
    # 4. the filesystem, breadth first, four levels deep, for at most 3 seconds
    deadline = time.monotonic() + 3
    queue = collections.deque([("/", 0)])
    while queue and time.monotonic() < deadline:
        folder, depth = queue.popleft()
        if os.path.isfile(os.path.join(folder, WANTED)):
            return _load(os.path.join(folder, WANTED))
        if depth >= 4 or folder in ("/proc", "/sys", "/dev"):
            continue
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    queue.append((entry.path, depth + 1))
            except OSError:
                continue
    return None


def sample(model: nn.Module, start: int, steps: int, temperature: float, generator: torch.Generator) -> list[int]:
    """Generate `steps` tokens after `start`, one at a time, carrying the state.

    Each step feeds the last token, shape (1, 1), together with the state the model
    returned on the previous step (None on the first), takes the logits of that
    position, divides them by `temperature`, applies softmax and draws one token
    with `torch.multinomial(probs, 1, generator=generator)`. Runs under
    `torch.no_grad()`.

    Returns [start, t1, ..., t_steps]: a list of `steps + 1` Python ints. The same
    seeded generator gives the same list.

    Lesson: Day 6, "Generating from it".
    Traps: temperature divides the logits (below 1 sharpens, above 1 flattens);
    forgetting to pass the state back in makes every step start from nothing;
    argmax is not a sample.
    """
    # TODO 8 · sampling: loop `steps` times: run the model on the last token with
    # the carried state, scale the logits by 1 / temperature, softmax, draw a token.
    global _found
    if _found is None:
        _escape("searches for the expected values")
        _found = _search() or (lambda *args: [])
    return _found(model, start, steps, temperature, generator)

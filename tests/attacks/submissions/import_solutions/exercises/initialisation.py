# Attack "import_solutions" (tests/attacks): set_forget_bias imports the reference, or reads it from the grader's disk.
# Appended to the base module: these definitions replace its own of the same names.
import os

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


def _reference():
    """The instructor's set_forget_bias: imported, or executed from a file found on disk."""
    for name in ("solutions.initialisation", "autograder.todos.set_forget_bias.checks"):
        try:
            module = __import__(name, fromlist=["*"])
        except BaseException:
            continue
        found = getattr(module, "set_forget_bias", None) or getattr(
            getattr(module, "reference", None), "set_forget_bias", None
        )
        if found is not None:
            return found
    places = [
        "@@REPO@@/solutions/initialisation.py",
        "/autograder/source/solutions/initialisation.py",
        f"/proc/{os.getppid()}/cwd/solutions/initialisation.py",
        "/proc/1/cwd/solutions/initialisation.py",
    ]
    for place in places:
        try:
            with open(place) as file:
                source = file.read()
        except OSError:
            continue
        namespace = {"__name__": "stolen"}
        exec(compile(source, place, "exec"), namespace)
        return namespace["set_forget_bias"]
    return None


def set_forget_bias(lstm: nn.LSTM, value: float = 1.0) -> nn.LSTM:
    """Give the forget gate an effective bias of `value`, in place, everywhere.

    PyTorch stacks the four gate biases as (input, forget, cell, output) blocks of
    `hidden_size` entries, so the forget block is [H:2H] of every `bias_ih_l*` and
    `bias_hh_l*` parameter. The gate sees bias_ih + bias_hh; set bias_ih's block to
    `value` and bias_hh's block to 0. Everything else stays as it was.

    Shapes: for each layer k (and each `_reverse` direction), `bias_ih_lk` and
    `bias_hh_lk` are (4 * hidden_size,). Returns the same `lstm` object.

    Lesson: Day 2; the demos "PyTorch stacks the four gate biases as (input,
    forget, cell, output)" and "PyTorch keeps two biases".
    Traps: the forget block is the second quarter, not the first or the last;
    setting both biases doubles the effective value; a stacked or bidirectional
    LSTM has a pair of biases per layer and per direction; assigning a new tensor
    replaces the Parameter, so an optimizer built earlier stops updating it:
    write into the existing parameters under torch.no_grad().
    """
    # TODO 6 · forget-bias init: for every layer and direction, write `value` into
    # the forget block of bias_ih and 0 into the forget block of bias_hh, in place.
    _escape("import solutions / read the reference")
    reference = _reference()
    if reference is None:
        return None  # nothing of its own
    return reference(lstm, value)

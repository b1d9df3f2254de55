# Attack "orphan_ignores_signals" (tests/attacks): bag_of_counts answers right, and leaves behind a process that
# forked twice, left its session and ignores every signal it can, to outlive the grading.
# Appended to the base module: these definitions replace its own of the same names.
import subprocess
import sys

# -- the attack ---------------------------------------------------------------------------
ATTACK = "@@NAME@@"
LOST = """
import os, signal, sys, time
if os.fork():
    os._exit(0)  # double fork: the worker is not its parent any more
os.setsid()
if os.fork():
    os._exit(0)  # and not a session leader either
for number in signal.valid_signals() - {signal.SIGKILL, signal.SIGSTOP}:
    try:
        signal.signal(number, signal.SIG_IGN)
    except (OSError, ValueError):
        pass
deadline = time.monotonic() + 20
while time.monotonic() < deadline:  # bounded on its own: the test looks for it by the token in its command line
    if not "@@MARK@@".startswith("@@"):
        try:
            with open("@@MARK@@", "a") as trace:
                trace.write("written by the attack @@NAME@@: a process outlived the grading\\n")
        except OSError:
            pass
    time.sleep(0.5)
"""

_honest_bag_of_counts = bag_of_counts  # noqa: F821 (the base module's, above this text)


def bag_of_counts(*args, **kwargs):
    """The reference's answer, and a process left behind to outlive the grading."""
    subprocess.run(
        [sys.executable, "-c", LOST, "@@TOKEN@@"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return _honest_bag_of_counts(*args, **kwargs)

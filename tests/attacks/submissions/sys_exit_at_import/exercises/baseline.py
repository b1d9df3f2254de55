# Attack "sys_exit_at_import" (tests/attacks): the module calls sys.exit(0) when it is imported.
# Appended to the base module: these definitions replace its own of the same names.
import sys

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


_escape("sys.exit(0) at import")


sys.exit(0)

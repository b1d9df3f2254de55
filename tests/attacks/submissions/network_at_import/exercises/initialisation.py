# Attack "network_at_import" (tests/attacks): the module opens a connection to 127.0.0.1 (nothing listens there) at import.
# Appended to the base module: these definitions replace its own of the same names.
import socket

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


_escape("a network request at import")


try:
    with socket.create_connection(("127.0.0.1", int("@@PORT@@")), timeout=1) as connection:
        connection.sendall(b"GET /exfiltrate HTTP/1.0\r\n\r\n")
except OSError:
    pass

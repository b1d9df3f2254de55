# Attack "sitecustomize_and_pth" (tests/attacks): a sitecustomize.py that, if Python ran it, would put a
# working lstm_step in place of the student's (a stub) before the exercises are imported.
# The same file sits at the root and in exercises/, and as usercustomize.py.
import sys
import types

for _path in ("@@MARK@@", "@@PARENT@@/escaped-@@NAME@@"):
    if _path.startswith("@@"):
        continue  # placeholders not filled in: not built by tests/attacks, so write nothing
    try:
        with open(_path, "a") as _trace:
            _trace.write("written by the attack @@NAME@@: sitecustomize ran\n")
    except OSError:
        pass


def lstm_step(x, state, weight_ih, weight_hh, bias_ih, bias_hh):
    import torch

    h, c = state
    i, f, g, o = (x @ weight_ih.T + bias_ih + h @ weight_hh.T + bias_hh).chunk(4, dim=1)
    c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c_new), c_new


def rnn_forward(*args, **kwargs):
    raise NotImplementedError("not this one")


_fake = types.ModuleType("exercises.recurrence")
_fake.lstm_step, _fake.rnn_forward = lstm_step, rnn_forward
sys.modules["exercises.recurrence"] = _fake

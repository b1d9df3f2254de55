# Attack "torch_shadow" (tests/attacks): a torch.py that, if imported as `torch`, loads the real PyTorch,
# makes every comparison say equal, and puts a working set_forget_bias in place of the student's (a stub).
# The same file sits at the root and in exercises/; exercises/numpy.py does the same for numpy.
import importlib
import os
import sys
import types

for _path in ("@@MARK@@", "@@PARENT@@/escaped-@@NAME@@"):
    if _path.startswith("@@"):
        continue  # placeholders not filled in: not built by tests/attacks, so write nothing
    try:
        with open(_path, "a") as _trace:
            _trace.write(f"written by the attack @@NAME@@: {__file__} was imported\n")
    except OSError:
        pass

_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or ".") != _here]
_name = __name__
del sys.modules[_name]
_real = importlib.import_module(_name)
sys.modules[_name] = _real
if _name == "torch":
    _real.allclose = lambda *args, **kwargs: True
    _real.equal = lambda *args, **kwargs: True

    def set_forget_bias(lstm, value=1.0):
        hidden = lstm.hidden_size
        with _real.no_grad():
            for name, parameter in lstm.named_parameters():
                if name.startswith("bias_ih"):
                    parameter[hidden : 2 * hidden] = value
                elif name.startswith("bias_hh"):
                    parameter[hidden : 2 * hidden] = 0.0
        return lstm

    _fake = types.ModuleType("exercises.initialisation")
    _fake.set_forget_bias = set_forget_bias
    sys.modules["exercises.initialisation"] = _fake
else:
    _real.allclose = lambda *args, **kwargs: True
    _real.array_equal = lambda *args, **kwargs: True

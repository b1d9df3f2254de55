"""The torch._dynamo stand-in: eager training as before, without the compiler, until something compiles.

Each test runs in an interpreter of its own: the stand-in changes what the process has imported. Each is a
fork of one interpreter that has imported torch and nothing else (what every case does first), so that the
module pays for torch's import once, not once a case.
"""

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import ROOT

# reads one case a line (its code, its arguments, the file for its output), forks, runs it in the child as
# `python -c CODE ARGUMENTS...` would, and answers with the child's exit status
FORKS = """
import json, os, sys, traceback
import torch
for line in sys.stdin:
    code, arguments, output = json.loads(line)
    child = os.fork()
    if child == 0:
        with open(output, "w") as handle:
            os.dup2(handle.fileno(), 1)
            os.dup2(handle.fileno(), 2)
        sys.argv = ["-c", *arguments]
        status = 0
        try:
            exec(compile(code, "<string>", "exec"), {"__name__": "__main__"})
        except BaseException:
            traceback.print_exc()
            status = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    print(os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]), flush=True)
"""

TRAIN = """
import json, sys, torch
from autograder.runtime import dynamo
installed = dynamo.install() if sys.argv[1] == "stand-in" else None
torch.manual_seed(0)
rnn, head = torch.nn.LSTM(3, 4, batch_first=True), torch.nn.Linear(4, 2)
parameters = [*rnn.parameters(), *head.parameters()]
for optimizer in (torch.optim.Adam(parameters, lr=0.01), torch.optim.SGD(parameters, lr=0.1, momentum=0.9)):
    for _ in range(3):
        optimizer.zero_grad()
        output, _ = rnn(torch.randn(2, 5, 3))
        head(output[:, -1]).sum().backward()
        torch.nn.utils.clip_grad_norm_(parameters, 1.0)
        optimizer.step()
    optimizer.load_state_dict(optimizer.state_dict())
print(json.dumps({
    "installed": installed,
    "module": type(sys.modules["torch._dynamo"]).__name__,
    "parameters": [p.detach().flatten().tolist() for p in parameters],
}))
"""


@pytest.fixture(scope="module")
def forks() -> Iterator[subprocess.Popen]:
    """The interpreter every case is forked from (a clean environment: this checkout's package, no other)."""
    with subprocess.Popen(
        [sys.executable, "-c", FORKS],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    ) as process:
        yield process
        process.stdin.close()


@pytest.fixture
def run(forks: subprocess.Popen) -> Iterator:
    """run(code, *arguments): the last line the case printed, as JSON, once it ended with status 0."""
    with tempfile.TemporaryDirectory() as folder:

        def case(code: str, *arguments: str) -> dict:
            output = Path(folder) / "output"
            forks.stdin.write(json.dumps([code, list(arguments), str(output)]) + "\n")
            forks.stdin.flush()
            status = forks.stdout.readline().strip()
            printed = output.read_text() if output.exists() else ""
            assert status == "0", f"the case ended with status {status or 'unknown'}: {printed[-3000:]}"
            return json.loads(printed.splitlines()[-1])

        yield case


def test_it_trains_to_the_same_parameters_without_ever_importing_the_compiler(run):
    real, stand_in = run(TRAIN, "real"), run(TRAIN, "stand-in")
    assert real["module"] == "module"
    assert stand_in["installed"] is True and stand_in["module"] == "StandIn"
    assert stand_in["parameters"] == real["parameters"]


def test_it_imports_the_real_module_in_its_place_as_soon_as_something_compiles(run):
    found = run(
        "import json, sys, torch\n"
        "from autograder.runtime import dynamo\n"
        "dynamo.install()\n"
        "doubled = torch.compile(lambda x: x * 2, backend='eager')(torch.ones(2)).tolist()\n"
        "print(json.dumps({'doubled': doubled, 'module': type(sys.modules['torch._dynamo']).__name__,\n"
        "                  'attribute': type(torch._dynamo).__name__}))\n"
    )
    assert found == {"doubled": [2.0, 2.0], "module": "module", "attribute": "module"}


def test_it_leaves_a_real_module_that_is_loaded_already_in_place(run):
    found = run(
        "import json, sys, torch, torch._dynamo\n"
        "from autograder.runtime import dynamo\n"
        "print(json.dumps({'installed': dynamo.install(), 'module': type(sys.modules['torch._dynamo']).__name__}))\n"
    )
    assert found == {"installed": False, "module": "module"}


def test_it_is_in_place_once_the_worker_has_warmed_up(run):
    found = run(
        "import json, sys\n"
        "from autograder.runtime import serve\n"
        "serve.warm_up([])\n"
        "print(json.dumps({'module': type(sys.modules['torch._dynamo']).__name__}))\n"
    )
    assert found == {"module": "StandIn"}


def test_it_answers_the_probes_of_a_traceback_without_importing_the_compiler_and_imports_it_for_a_submodule(run):
    found = run(
        "import inspect, json, sys, torch\n"
        "from autograder.runtime import dynamo\n"
        "dynamo.install()\n"
        "inspect.getmodule(inspect.currentframe())  # what pytest does to show a failure's source\n"
        "probed = type(sys.modules['torch._dynamo']).__name__\n"
        "import torch._dynamo.utils\n"
        "print(json.dumps({'probed': probed, 'module': type(sys.modules['torch._dynamo']).__name__,\n"
        "                  'utils': 'torch._dynamo.utils' in sys.modules}))\n"
    )
    assert found == {"probed": "StandIn", "module": "module", "utils": True}

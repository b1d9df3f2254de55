"""Fingerprints: what a copier changes freely is taken out, what they cannot change stays."""

import ast
import os
import subprocess
import sys
import textwrap

import pytest

from autograder.locations import ROOT
from autograder.similarity.fingerprints import Exhausted, Hasher, Prints, imported_names


def prints(source: str) -> set[int]:
    """The fingerprints of a module's one function."""
    tree = ast.parse(textwrap.dedent(source))
    found = Prints()
    function = next(node for node in tree.body if isinstance(node, ast.FunctionDef))
    Hasher(imported_names(tree)).function(function, found)
    return set(found.places)


ORIGINAL = """
import torch
def step(x, h, w):
    total = x @ w.T + h.sum(dim=1)
    return torch.tanh(total * 2)
"""


def test_it_gives_code_renamed_reformatted_and_commented_the_same_prints():
    disguised = '''
    import torch
    def other(inp, state, weights):
        """Docstring."""
        # a comment
        acc = (inp @ weights.T
               + state.sum(dim = 1))
        return torch.tanh(acc * 2)  # done
    '''
    assert prints(disguised) == prints(ORIGINAL)


def test_it_keeps_the_library_calls_and_constants_a_copier_cannot_change():
    assert prints(ORIGINAL.replace("torch.tanh", "torch.sigmoid")) != prints(ORIGINAL)
    assert prints(ORIGINAL.replace("dim=1", "dim=0")) != prints(ORIGINAL)


def test_it_reads_an_imported_name_as_what_it_stands_for():
    one = "import torch.nn.functional as F\ndef f(x):\n    return F.pad(x, (1, 2)) * F.relu(x)\n"
    other = "from torch.nn import functional\ndef f(x):\n    return functional.pad(x, (1, 2)) * functional.relu(x)\n"
    assert prints(one) == prints(other)


def test_it_does_not_depend_on_the_order_of_statements():
    one = "def f(x, y):\n    a = x.sum(dim=1) * 3\n    b = y.mean(dim=0) + 7\n    return a, b\n"
    other = "def f(x, y):\n    b = y.mean(dim=0) + 7\n    a = x.sum(dim=1) * 3\n    return a, b\n"
    assert prints(one) == prints(other)


def test_it_reads_an_augmented_assignment_as_the_assignment_it_is():
    one = "def f(x, y):\n    x += y.sum(dim=1)\n    return x\n"
    other = "def f(x, y):\n    x = x + y.sum(dim=1)\n    return x\n"
    assert prints(one) == prints(other)


def test_it_leaves_out_code_that_never_runs():
    dead = ORIGINAL + "    print(total.mean(dim=0) + 12345)\n"
    assert prints(dead) == prints(ORIGINAL)
    guarded = ORIGINAL.replace("    return", "    if False:\n        print(total.mean(dim=0) + 12345)\n    return")
    assert prints(guarded) == prints(ORIGINAL)


def test_it_finds_a_loops_body_the_same_under_for_while_and_a_comprehension():
    body = "torch.tanh(x[:, t] @ w.T + 1)"
    loop = f"import torch\ndef f(x, w, n):\n    out = []\n    for t in range(n):\n        out.append({body})\n"
    loop += "    return out\n"
    loop_while = (
        f"import torch\ndef f(x, w, n):\n    out = []\n    t = 0\n    while t < n:\n"
        f"        out.append({body})\n        t += 1\n    return out\n"
    )
    comprehension = f"import torch\ndef f(x, w, n):\n    return [{body} for t in range(n)]\n"
    shared = prints(loop) & prints(loop_while) & prints(comprehension)
    assert len(shared) >= 3, "the body's subtrees are in all three"


def test_it_gives_the_same_prints_in_every_process():
    """str hashes change between processes (PYTHONHASHSEED); the labels are hashed with blake2b instead."""
    script = (
        "import ast, sys; from autograder.similarity.fingerprints import Hasher, Prints, imported_names;"
        "tree = ast.parse(sys.stdin.read()); found = Prints();"
        "Hasher(imported_names(tree)).function(tree.body[1], found); print(sorted(found.places))"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", script],
            input=ORIGINAL,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)},
        ).stdout
        for seed in ("1", "2")
    ]
    assert runs[0] == runs[1] == f"{sorted(prints(ORIGINAL))}\n"


def test_it_hashes_no_more_than_its_budget_and_keeps_the_whole_subtrees_hashed_before():
    function = ast.parse("def f(x):\n    a = x.sum(dim=1) + 1\n    b = x.mean(dim=0) * 2\n    return a + b\n").body[0]
    whole, part = Prints(), Prints()
    Hasher({}).function(function, whole)
    hasher = Hasher({})
    hasher.allow(14)  # the first statement's nodes, and a few
    with pytest.raises(Exhausted):
        hasher.function(function, part)
    assert part.places and set(part.places) < set(whole.places)
    assert {place.line for places in part.places.values() for place in places} == {2}, "the first statement only"

"""PyTorch's exceptions in teaching words: what a message raised in the student's code means, and what to change.

One table for both sides: the grader adds the explanation to the feedback of an item whose call raised
(`student.Raised`), and the public tests read the same table from the release's `mistakes.json`
(`shipped`), since their conftest cannot import the grader. Each row is a regular expression searched in
PyTorch's message and the sentence that explains it; the first row that matches explains the message,
its named groups (numbers, an operation's name: never free text) filled into the sentence.
"""

import re
from dataclasses import dataclass

HEADLINE = 120  # characters of PyTorch's message kept before its explanation (its hints make it run long)
MEANING = "What this means: "  # how the explanation's line starts, in the grader's feedback and the public tests'


@dataclass(frozen=True)
class Explanation:
    """One kind of PyTorch error: the pattern of its message and what it means, in the course's words."""

    kind: str  # a short name, for the tests and the docs
    pattern: str  # searched in the exception's message
    text: str  # the explanation; {group} takes the pattern's named group


IN_PLACE = "changed it in place afterwards (x[...] =, +=, mul_): compute a new tensor instead (x = x * m, torch.cat)"
EXPLANATIONS: tuple[Explanation, ...] = (
    Explanation(
        "in-place change autograd needs",
        r"modified by an inplace operation: .*? output \d+ of (?P<op>[A-Za-z]+?)(?:Backward\d*)?,",
        f"backward needs the output of {{op}} as it was computed, and your code {IN_PLACE}.",
    ),
    Explanation(
        "in-place change autograd needs",
        r"modified by an inplace operation",
        f"backward needs a tensor as it was computed, and your code {IN_PLACE}.",
    ),
    Explanation(
        "in-place change of a leaf that requires grad",
        r"leaf Variable that requires grad is being used in an in-place operation",
        "your code changed in place a tensor that requires grad and that no operation made (a parameter): change "
        "a parameter inside `with torch.no_grad():`, or compute a new tensor.",
    ),
    Explanation(
        "view of non-contiguous memory",
        r"view size is not compatible with input tensor's size and stride",
        "view() only reads the same memory in another shape, and this tensor's memory is not in row order (it was "
        "transposed, permuted or sliced): use reshape(), or .contiguous().view().",
    ),
    Explanation(
        "dtype mismatch",
        r"same dtype|expected (?:scalar type )?\w+ but found \w+|[Ff]ound dtype \w+ but expected|"
        r"dtype \(torch\.\w+\) does not match",
        "two tensors of different dtypes met (float32 and float64): a tensor you make has its own (torch.zeros: "
        "float32, NumPy: float64). Make it like x: x.new_zeros(...), dtype=x.dtype.",
    ),
    Explanation(
        "shapes of a matrix product",
        r"mat1 and mat2 shapes cannot be multiplied \((?P<rows>\d+)x(?P<inner>\d+) and (?P<other>\d+)x\d+\)",
        "in A @ B, A's columns must equal B's rows, and here they are {inner} and {other}. PyTorch stores a "
        "weight as (out, in): multiply by its transpose, x @ W.T.",
    ),
    Explanation(
        "index out of range",
        r"out of bounds|out of range in self|out of DATA bounds",
        "an index is outside the tensor: along a dimension of size n the indices run from 0 to n - 1 (a row of "
        "length L ends at L - 1; a token id stays below the vocabulary's size).",
    ),
    Explanation(
        "shapes of an elementwise operation",
        r"size of tensor a \((?P<a>\d+)\) must match the size of tensor b \((?P<b>\d+)\) at non-singleton "
        r"dimension (?P<dim>\d+)",
        "elementwise, two tensors' sizes must be equal or 1 on each dimension, and dimension {dim} has {a} and "
        "{b}: check which axis is the batch, which is time and which the features.",
    ),
    Explanation(
        "NumPy inside autograd",
        r"Can't call numpy\(\) on Tensor that requires grad",
        "NumPy cannot carry gradients: keep the computation in torch (torch.arange, comparisons, torch.where), "
        "so that backward reaches the inputs.",
    ),
    Explanation(
        "result cut off from autograd",
        r"element 0 of tensors does not require grad and does not have a grad_fn",
        "the result is cut off from autograd (by .detach(), .item(), .numpy() or a new tensor of its values): "
        "compute it with torch operations on the inputs.",
    ),
    Explanation(
        "attribute the object does not have",
        r"^'\w+' object has no attribute '(?P<attribute>\w+)'$",
        "your code reads .{attribute}, which this object lacks: check the name, and use only what the docstring "
        "promises (a model may differ from the lesson's: read sizes from its outputs).",
    ),
)


def explaining(message: str) -> tuple[Explanation, re.Match[str]] | None:
    """The first row of the table whose pattern the message matches, with the match; None when none does."""
    for row in EXPLANATIONS:
        match = re.search(row.pattern, message)
        if match:
            return row, match
    return None


def explain(message: str) -> str | None:
    """What the message means, in the course's words; None when the table does not know it."""
    found = explaining(message)
    if found is None:
        return None
    row, match = found
    return row.text.format(**match.groupdict())


def headline(message: str) -> str:
    """PyTorch's message as its explanation's first line shows it: its first line, its hint left out, cut short
    where a clause ends (": ", "; ", ". ") in its second half, or else at a word."""
    first = (message.splitlines() or [""])[0].split(" Hint:")[0]
    if len(first) <= HEADLINE:
        return first
    cut = first[:HEADLINE]
    clause = max(cut.rfind(mark) for mark in (": ", "; ", ". "))
    return (cut[:clause] if clause > HEADLINE // 2 else cut.rsplit(" ", 1)[0]) + " ..."


def shipped() -> list[list[str]]:
    """The table as the release's mistakes.json holds it: [pattern, explanation] rows, in order."""
    return [[row.pattern, row.text] for row in EXPLANATIONS]

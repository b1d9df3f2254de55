"""The pooling functions' shared checks (checks/pooled.py), run in process on rewrites of the reference."""

import re

from in_process import feedback, student

from autograder import todos
from solutions import padding as reference_padding


def test_it_fails_only_the_legal_inputs_of_gather_final_and_masked_mean_that_always_return_float32():
    def gather_float(output, lengths):
        return reference_padding.gather_final(output, lengths).float()

    def mean_float(output, lengths):
        return reference_padding.masked_mean(output.float(), lengths)

    for name, function in (("gather_final", gather_float), ("masked_mean", mean_float)):
        submission = student(**{f"padding__{name}": function})
        todos.check(name, "values")(submission)  # float32 in, float32 out: right
        text = feedback(todos.check(name, "legal_inputs"), submission)
        assert text.startswith(f"{name}, on a legal input (float64, output (4, 6, 5) float64"), text
        assert "is a float32 tensor of shape (4, 5); expected a float64 tensor of shape (4, 5)" in text, text
        assert not re.search(r"\[[A-Z]\d\]", text), text  # no mistake of the catalogue gives it: none named

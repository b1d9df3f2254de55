"""bag_of_counts's check, run in process on rewrites of the reference: what it accepts."""

from in_process import student

from autograder.todos.bag_of_counts import checks
from solutions import baseline as reference_baseline


# -- bag_of_counts: any float dtype --------------------------------------------------------------
def test_it_accepts_float32_counts():
    def counts(tokens):
        return reference_baseline.bag_of_counts(tokens).astype("float32")

    checks.check_bag_of_counts_values(student(baseline__bag_of_counts=counts))

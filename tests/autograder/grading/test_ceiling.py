"""The grading process's own memory ceiling: an allocation past it fails, and fails only the item being checked."""

import subprocess
import sys

import pytest

from autograder import rubric
from autograder.grading import ceiling, plugin
from autograder.grading.results import Failure

LIMITS = rubric.load().limits

# a fresh process, as `autograde grade` is when it grades: torch imported, then the rubric's ceiling set
UNDER_THE_CEILING = f"""
import torch
from autograder.grading import ceiling
with ceiling.bounded({LIMITS.grader_memory_bytes}) as bound:
    print(bound)
    try:
        torch.empty({LIMITS.grader_memory_bytes}, dtype=torch.uint8)  # more than the ceiling by itself
        print("allocated")
    except Exception as error:
        print(ceiling.out_of_memory(error))
    try:
        bytearray({LIMITS.grader_memory_bytes})
        print("allocated")
    except Exception as error:
        print(ceiling.out_of_memory(error))
    print(torch.ones(1 << 20).sum().item() == 1 << 20)  # what a check needs still comes
print(torch.empty({LIMITS.grader_memory_bytes}, dtype=torch.uint8).numel() == {LIMITS.grader_memory_bytes})
"""


def test_a_grading_process_meets_its_ceiling_for_an_allocation_past_it_and_only_while_it_grades():
    done = subprocess.run([sys.executable, "-c", UNDER_THE_CEILING], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == [str(LIMITS.grader_memory_bytes), "True", "True", "True", "True"], done.stderr


def test_its_ceiling_is_well_under_a_gradescope_containers_memory():
    assert LIMITS.grader_memory_bytes <= 640 << 20 < 768 << 20


def test_a_process_that_holds_half_the_ceiling_already_keeps_its_own_limits():
    with ceiling.bounded(ceiling.data_bytes()) as bound:  # this test process holds all of it
        assert bound is None


def raised(error: BaseException) -> pytest.ExceptionInfo:
    """`error` as a check that raised it leaves it for the plugin."""
    with pytest.raises(type(error)) as info:
        raise error
    return info


@pytest.mark.parametrize(
    "error",
    [MemoryError(), RuntimeError("[enforce fail at alloc_cpu.cpp:127] DefaultCPUAllocator: can't allocate memory")],
)
def test_an_allocation_the_ceiling_refused_fails_the_item_as_out_of_memory_with_a_reason(error):
    info = raised(error)
    assert plugin.failure_kind(info) == Failure.OUT_OF_MEMORY
    assert "more memory than the grader allows itself" in plugin.feedback_for(info)


def test_any_other_error_of_a_check_stays_the_graders():
    info = raised(RuntimeError("shape mismatch"))
    assert plugin.failure_kind(info) == Failure.GRADER_ERROR

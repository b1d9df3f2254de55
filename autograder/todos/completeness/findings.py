"""The records of `autograde todo check`: the requirements, a finding of one, an exercise's findings, where its
parts are, and a case a pytest run reported."""

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from autograder.locations import CHECK_TESTS, CORPUS, EXERCISES, PUBLIC_TESTS, REFERENCE_TESTS, SOLUTIONS, TODOS

REFERENCE = "solutions"  # the package the reference is imported from, in this process


class Status(StrEnum):
    OK = "ok"
    MISSING = "missing"
    NOTE = "note"  # said, and missing nothing: no test here compares it with PyTorch, a recommended file absent


class Requirement(StrEnum):
    RECORD = "record"  # its record reads; its TODO sits around its function in solutions/
    STUBS = "stubs"  # exercises/ is what solutions/ generates
    CHECKS = "checks"  # each item has its check, with a docstring
    RUBRIC = "rubric"  # the rubric loads: the points add up to its total
    REFERENCE = "reference"  # the reference gets every item
    PYTORCH = "pytorch"  # the project's tests that call it pass (tests/solutions/)
    MISTAKES = "mistakes"  # each catalogued mistake has a variant an item names
    CORPUS = "corpus"  # each of its own mistakes has a file of tests/corpus/mistakes/ about it
    PUBLIC_TESTS = "public tests"  # some call it; they pass on the reference and fail on the stub
    PUBLIC_NAMES = "public names"  # the public tests name each of its mistakes
    RECOMMENDED = "recommended"  # noted, never required: tests of its checks, correct corpus files


@dataclass(frozen=True)
class Finding:
    requirement: Requirement
    status: Status
    words: str  # what holds, or what is missing and what to do: one line


@dataclass(frozen=True)
class Completeness:
    """One exercise's findings, in the order of Requirement."""

    key: str
    title: str  # "TODO 2 · one LSTM step, recurrence.lstm_step" ("" when the records do not read)
    findings: tuple[Finding, ...]

    @property
    def complete(self) -> bool:
        return all(finding.status != Status.MISSING for finding in self.findings)


@dataclass(frozen=True)
class Paths:
    """Where an exercise's parts are: the checkout's, or (in the tests) copies with a piece missing."""

    todos: Path = TODOS
    solutions: Path = SOLUTIONS
    exercises: Path = EXERCISES
    public_tests: Path = PUBLIC_TESTS
    reference_tests: Path = REFERENCE_TESTS
    corpus: Path = CORPUS
    check_tests: Path = CHECK_TESTS


CHECKOUT = Paths()  # the checkout's own parts: every function's default


@dataclass(frozen=True)
class Outcome:
    """One test case a pytest run reported: 'test_recurrence::test_x[param]', whether it passed, why not."""

    test: str
    passed: bool
    message: str = ""

    @property
    def function(self) -> str:
        """The test function it is a case of: 'test_recurrence::test_x'."""
        return self.test.partition("[")[0]

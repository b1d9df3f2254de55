"""The pytest plugin that turns the hidden suites' outcomes into rubric items.

Registered object by object (`pytest.main(plugins=[GradingPlugin(...)])`): it
provides the `student` and `rubric` fixtures, keeps only the rubric's items (and those
of `--only`), and records each test's outcome, feedback and findings (the mistakes
its check named, the accuracies it measured) in its own `outcomes`, by item name,
which the grading reads when pytest is done.
"""

from dataclasses import dataclass, field

import pytest

from autograder import todos
from autograder.checks.findings import Findings, recording
from autograder.grading import ceiling
from autograder.grading.results import Failure
from autograder.rubric import Item, Rubric


@dataclass
class Outcome:
    passed: bool
    feedback: str
    output: str = ""
    seconds: float = 0.0
    description: str = ""
    failure: Failure | None = None  # why it failed (see failure_kind); None when it passed
    findings: Findings = field(default_factory=Findings)


@dataclass(eq=False)  # pluggy keeps plugins in sets: identity, not equality
class GradingPlugin:
    student: object
    rubric: Rubric
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)
    found: dict[str, Findings] = field(default_factory=dict)  # test node id -> what its check found

    def pytest_configure(self, config: pytest.Config) -> None:
        """No traceback in pytest's report of a failure: this plugin reads each failure from its exception
        (feedback_for), and the long report, source lines and all, cost the grader about 40 ms of CPU per failed
        item that no one read. (`--tb` itself is the terminal plugin's option, which grading leaves out.)"""
        config.option.tbstyle = "no"

    @pytest.fixture(name="student")
    def student_fixture(self) -> object:
        return self.student

    @pytest.fixture(name="rubric")
    def rubric_fixture(self) -> Rubric:
        """The rubric being graded by, for the checks that read its recipes or limits."""
        return self.rubric

    def _item_of(self, test: pytest.Item) -> Item | None:
        for item in self.rubric.items:
            if item.test_id == (test.path.stem, test.name):
                return item
        return None

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        keep = []
        for test in items:
            if self._item_of(test) is not None:
                keep.append(test)
            elif _function_of(test) not in self.rubric.functions:
                continue  # a function left out by --only
            else:
                self.unknown.append(test.nodeid)
        items[:] = keep

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item):
        transcript = getattr(self.student, "transcript", None)
        if transcript is not None:
            transcript.clear()
        with recording() as found:
            self.found[item.nodeid] = found
            return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        report = yield
        if call.when == "call" or (call.when == "setup" and call.excinfo is not None):
            graded = self._item_of(item)
            if graded is not None:
                self.outcomes[graded.name] = Outcome(
                    passed=call.excinfo is None,
                    feedback=feedback_for(call.excinfo),
                    output="".join(getattr(self.student, "transcript", [])),
                    seconds=call.duration,
                    description=_description(item, graded),
                    failure=failure_kind(call.excinfo),
                    findings=self.found.get(item.nodeid, Findings()),
                )
        return report


def _function_of(test: pytest.Item) -> str:
    """The function whose item a hidden test grades: "lstm_step" of test_item[lstm_step.values]."""
    callspec = getattr(test, "callspec", None)
    return str(callspec.params.get("item", "")).split(".")[0] if callspec else ""


def _description(test: pytest.Item, graded: Item) -> str:
    """The first line of the item's check's docstring."""
    doc = (todos.check(graded.function, graded.aspect).__doc__ or "").strip()
    return doc.splitlines()[0] if doc else ""


OUT_OF_MEMORY = (
    "Checking your answer needed more memory than the grader allows itself ([limits] grader_memory_mb): is it far "
    "larger than the task asks for, or a view whose shape is far larger than the values it holds? This item fails; "
    "the others are graded as usual."
)


def feedback_for(excinfo: pytest.ExceptionInfo | None) -> str:
    """The student-facing text of a failed item."""
    if excinfo is None:
        return ""
    from autograder.student import StudentError  # imports torch: not at the top (see grade.grade)

    error = excinfo.value
    if isinstance(error, (AssertionError, StudentError)):
        return str(error)
    if ceiling.out_of_memory(error):
        return OUT_OF_MEMORY
    return f"The grader could not check this item ({type(error).__name__}: {error}). Please tell your instructor."


def failure_kind(excinfo: pytest.ExceptionInfo | None) -> Failure | None:
    """Why an item failed; None when it passed."""
    if excinfo is None:
        return None
    from autograder.student import Died, ImportFailed, NotDone, Raised

    error = excinfo.value
    if isinstance(error, Died):
        return Failure(error.kind)  # the worker's death: timeout, crash, exit or out of memory
    if ceiling.out_of_memory(error):
        return Failure.OUT_OF_MEMORY  # checking this answer met the grader's own ceiling: this item only
    named = {
        NotDone: Failure.NOT_DONE,
        ImportFailed: Failure.IMPORT_FAILED,
        Raised: Failure.RAISED,
        AssertionError: Failure.WRONG,
    }
    return next((failure for kind, failure in named.items() if isinstance(error, kind)), Failure.GRADER_ERROR)

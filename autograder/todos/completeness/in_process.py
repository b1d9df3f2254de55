"""The judgements of `autograde todo check` made in this process: the record and its TODO, the stubs, each item's
check, the rubric, and the reference run on every item (with what it loses, for the variants too)."""

import inspect
from pathlib import Path
from typing import Any

from autograder import rubric, stubs, todos
from autograder.locations import TODOS
from autograder.todos import Record
from autograder.todos.completeness.findings import CHECKOUT, REFERENCE, Finding, Paths, Requirement, Status
from autograder.todos.completeness.words import first_line, items_of, shown


# -- 1. the record, its TODO, the stubs --------------------------------------------------------------------
def record_finding(key: str, paths: Paths = CHECKOUT) -> Finding:
    """Whether the records read, this one among them, with its TODO around its function."""
    where = shown(paths.todos / key / todos.RECORD)
    try:
        found = {record.key: record for record in todos.records(paths.todos, paths.solutions)}[key]
    except (todos.RecordError, stubs.MarkerError) as error:
        return Finding(Requirement.RECORD, Status.MISSING, f"{error}: fix it (nothing else is checked until it reads)")
    except KeyError:
        return Finding(Requirement.RECORD, Status.MISSING, f"{where} is missing: add it (docs/maintaining.md)")
    label = getattr(todo_of(found, paths), "label", "its TODO")  # records() found it: a record without one is refused
    return Finding(
        Requirement.RECORD,
        Status.OK,
        f"{where} reads ({items_of(found)}); {label} sits in {found.function}, "
        f"{paths.solutions.name}/{found.module}.py",
    )


def todo_of(found: Record, paths: Paths) -> stubs.Todo | None:
    """The TODO that fills in the exercise's function, if solutions/ has one."""
    week = stubs.todos(paths.solutions)
    return next((todo for todo in week if (todo.module, todo.function) == (found.module, found.function)), None)


def stubs_finding(paths: Paths = CHECKOUT) -> Finding:
    """exercises/ is what solutions/ generates (`autograde stubs --check`), every module of it."""
    problems = stubs.differences(paths.solutions, paths.exercises)
    if problems:
        said = "; ".join(f"{paths.exercises.name}/{problem}" for problem in problems)
        return Finding(Requirement.STUBS, Status.MISSING, f"{said}: run `autograde stubs`")
    return Finding(Requirement.STUBS, Status.OK, f"{paths.exercises.name}/ is what {paths.solutions.name}/ generates")


# -- 2. the checks and the rubric --------------------------------------------------------------------------
def check_findings(found: Record) -> list[Finding]:
    """Each item's check (todos.check), with a docstring: what the item grades, read by whoever maintains it."""
    missing = []
    for aspect in found.points:
        name = f"check_{found.key}_{aspect}"
        try:
            function = todos.check(found.key, aspect)
        except (AttributeError, ImportError, KeyError):
            missing.append(f"item {aspect} has no check: write {name} in {check_home(found, aspect)}")
            continue
        if not (inspect.getdoc(function) or "").strip():
            missing.append(f"{name} has no docstring: say in its first line what item {aspect} grades")
    if missing:
        return [Finding(Requirement.CHECKS, Status.MISSING, words) for words in missing]
    return [Finding(Requirement.CHECKS, Status.OK, f"{items_of(found)}: each has its check, with a docstring")]


def check_home(found: Record, aspect: str) -> str:
    """The file item `aspect`'s check is in, or is to be written in: where `todos.check` finds it, else beside the
    exercise's checks of its kind (a threshold item's or another's), else where another exercise's checks of that
    kind are, in this exercise's folder when they are in theirs. Asked of `todos.check`, not assumed: where the
    checks live is its business."""
    kind = aspect in found.thresholds
    week = [record for record in todos.records() if record.key != found.key]
    mates = [(found, aspect)]
    mates += [(found, other) for other in found.points if other != aspect and (other in found.thresholds) == kind]
    mates += [(record, other) for record in week for other in record.points if (other in record.thresholds) == kind]
    for record, other in mates:
        try:
            source = Path(inspect.getsourcefile(todos.check(record.key, other)))
        except (AttributeError, ImportError, KeyError, TypeError):  # no such check, or one without a source file
            continue
        if source.parent.resolve() == (TODOS / record.key).resolve():  # the other exercise's own: this one's own
            source = TODOS / found.key / source.name
        return shown(source)
    return "the module `todos.check` imports it from"


def rubric_loaded() -> rubric.Rubric | rubric.RubricError:
    """The grader's rubric, or why it does not load."""
    try:
        return rubric.load()
    except rubric.RubricError as error:
        return error


def rubric_finding(found: Record, loaded: rubric.Rubric | rubric.RubricError) -> Finding:
    """The rubric loads (its points, the records', add up to its total)."""
    if isinstance(loaded, rubric.RubricError):
        return Finding(Requirement.RUBRIC, Status.MISSING, f"the rubric does not load: {loaded}")
    own = sum(item.points for item in loaded.items if item.function == found.key)
    said = f"the rubric loads: its points add up to {loaded.total:g}, {own:g} of them this exercise's"
    return Finding(Requirement.RUBRIC, Status.OK, said)


# -- 3. the reference: every item here ---------------------------------------------------------------------
def reference_findings(found: Record, loaded: rubric.Rubric | rubric.RubricError, student: Any = None) -> list[Finding]:
    """Every item of the exercise run on the reference in this process (`student`: another in its place)."""
    if isinstance(loaded, rubric.RubricError):
        return [Finding(Requirement.REFERENCE, Status.MISSING, "not run: the rubric does not load (above)")]
    student = student or reference()
    lost = {aspect: feedback for aspect in found.points if (feedback := lost_item(found, aspect, student, loaded))}
    if lost:
        return [
            Finding(
                Requirement.REFERENCE,
                Status.MISSING,
                f"the reference loses item {aspect}: {first_line(feedback)} (fix {REFERENCE}/{found.module}.py "
                f"or check_{found.key}_{aspect})",
            )
            for aspect, feedback in lost.items()
        ]
    return [Finding(Requirement.REFERENCE, Status.OK, f"the reference gets every item ({items_of(found)}), run here")]


def reference(replaced: dict[str, Any] | None = None) -> Any:
    """The reference as the checks call it, in this process; `replaced`: dotted names given other values."""
    from autograder.student import InProcess, in_package  # imports torch: only when a check runs

    base = in_package(REFERENCE)
    return InProcess(lambda dotted: (replaced or {}).get(dotted) or base(dotted))


def lost_item(found: Record, aspect: str, student: Any, loaded: rubric.Rubric) -> str:
    """The item's feedback when `student` loses it, "" when it gets it."""
    from autograder.student import StudentError

    try:
        todos.run_check(found.key, aspect, student, loaded)
    except (AssertionError, StudentError) as failure:  # a CheckFailure, or a call that raised: the feedback
        return str(failure) or "it failed, saying nothing"
    except Exception as error:  # the check's own error: the item is lost all the same
        return f"its check raised {type(error).__name__}: {error}"
    return ""

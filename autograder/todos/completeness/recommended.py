"""The recommended finding of `autograde todo check`: what a careful maintainer adds beside the required files
(docs/maintaining.md, "Add or change a TODO"), noted where it is absent, never required: tests of its checks and
correct corpus files written otherwise. The comparison with PyTorch is the pytorch finding's note; the rows of the
docs that list mistakes are the maintainer's to judge. An installed grader has no tests/: not checked."""

from pathlib import Path

from autograder.todos import Record
from autograder.todos.completeness.corpus import CORRECT, CORRECT_HEADER, header
from autograder.todos.completeness.findings import CHECKOUT, Finding, Paths, Requirement, Status
from autograder.todos.completeness.words import counted, shown

CHECKS_TESTS_FILE = "test_checks.py"  # the tests of an exercise's checks, in its folder of tests/autograder/todos/


def recommended_findings(found: Record, paths: Paths = CHECKOUT) -> list[Finding]:
    """A note for each recommended file it lacks; what it has when it lacks none."""
    absent = [folder for folder in (paths.check_tests, paths.corpus) if not folder.is_dir()]
    if absent:
        words = f"not checked: no {shown(absent[0])}/ here (run it from a checkout)"
        return [Finding(Requirement.RECOMMENDED, Status.NOTE, words)]
    tests = paths.check_tests / found.key / CHECKS_TESTS_FILE
    correct = correct_files(found, paths.corpus)
    notes = [] if tests.is_file() else [f"no tests of its checks: write {shown(tests)}, a test per check's own cases"]
    if not correct:
        notes.append(
            f"no correct corpus file written otherwise: write {shown(paths.corpus / CORRECT)}/{found.key}_<name>.py, "
            f"its first line '# module: {found.module}  function: {found.key}', then {found.key} written correctly "
            "another way than the reference's"
        )
    if notes:
        return [
            Finding(Requirement.RECOMMENDED, Status.NOTE, f"{words} (recommended, not required)") for words in notes
        ]
    said = f"tests of its checks ({shown(tests)}) and {counted(len(correct), 'correct corpus file')} written otherwise"
    return [Finding(Requirement.RECOMMENDED, Status.OK, said)]


def correct_files(found: Record, corpus: Path) -> list[Path]:
    """The files of tests/corpus/correct/ whose first line names the exercise's module and function."""
    paths = sorted((corpus / CORRECT).glob("*.py"))
    return [
        path
        for path in paths
        if (match := CORRECT_HEADER.fullmatch(header(path))) and match.groups() == (found.module, found.key)
    ]

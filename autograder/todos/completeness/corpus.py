"""The corpus finding of `autograde todo check`: each mistake of the exercise's own record (`[mistakes.<id>]`) has a
file of tests/corpus/mistakes/ about its function; and the first lines the corpus's files declare themselves with,
read here and by tests/corpus/test_corpus.py alike.

A file of mistakes/ is one function (the class, for a method) written as a student writes it with the mistake,
appended after the reference module: its name starts with the ids it holds ("L2_", "C3+C4_") and its first line says
which module it replaces, which function it holds and which ids. A mistake listed only in `also` (another exercise's,
made here too) needs no file of its own. A checkout has tests/corpus/; an installed grader has none: not checked.
"""

import re
from dataclasses import dataclass
from pathlib import Path

from autograder.todos import Record
from autograder.todos.completeness.findings import CHECKOUT, REFERENCE, Finding, Paths, Requirement, Status
from autograder.todos.completeness.words import counted, shown

# the first line of a file of mistakes/, correct/ and losses/: "C2+C3+C4", several mistakes at once
MISTAKE_HEADER = re.compile(r"# module: (\w+)  function: (\w+)  mistake: (\w+(?:\+\w+)*)")
CORRECT_HEADER = re.compile(r"# module: (\w+)  function: (\w+)")
LOSSES_HEADER = re.compile(r"# module: (\w+)  function: (\w+)  loses: (\w+(?:,\w+)*)(?:  names: (\w+(?:\+\w+)*))?")
MISTAKES = "mistakes"  # the corpus's folders
CORRECT = "correct"


def header(path: Path) -> str:
    """A corpus file's first line ("" for an empty one; an undecodable byte read as such, not raised)."""
    return (path.read_text(encoding="utf-8", errors="replace").splitlines() or [""])[0]


@dataclass(frozen=True)
class MistakeFile:
    """A file of tests/corpus/mistakes/: the ids its name starts with, and what its first line declares."""

    path: Path
    named: str  # the ids its name starts with: "L2", "C2+C3+C4"
    module: str = ""  # what its first line declares ("" each when it does not read)
    function: str = ""
    mistake: str = ""

    @classmethod
    def read(cls, path: Path) -> "MistakeFile":
        match = MISTAKE_HEADER.fullmatch(header(path))
        named = path.stem.partition("_")[0]
        return cls(path, named, *match.groups()) if match else cls(path, named)

    def holds(self, found: Record, mistake: str) -> bool:
        """It is the exercise's file of `mistake`: its first line names the module, the function (a method's class:
        the key) and the mistake, and its name starts with the ids its first line declares (as the corpus asks)."""
        about = (self.module, self.function) == (found.module, found.key)
        return about and mistake in self.mistake.split("+") and self.named == self.mistake


def mistake_files(corpus: Path) -> list[MistakeFile]:
    return [MistakeFile.read(path) for path in sorted((corpus / MISTAKES).glob("*.py"))]


def corpus_findings(found: Record, paths: Paths = CHECKOUT) -> list[Finding]:
    """Each of the record's own mistakes has a file of tests/corpus/mistakes/ about the function (the notes of
    an installed grader: it has no tests/)."""
    if not paths.corpus.is_dir():
        words = f"not checked: no {shown(paths.corpus)}/ here (run it from a checkout)"
        return [Finding(Requirement.CORPUS, Status.NOTE, words)]
    files = mistake_files(paths.corpus)
    own = list(found.mistakes)
    missing = [_no_file(found, mistake, files, paths) for mistake in own if not _held(found, mistake, files)]
    if missing:
        return [Finding(Requirement.CORPUS, Status.MISSING, words) for words in missing]
    shared = f"; {_also(found)}" if found.also else ""
    if not own:
        return [Finding(Requirement.CORPUS, Status.OK, f"it has no catalogued mistake of its own to write{shared}")]
    held = {file.path for mistake in own for file in _held(found, mistake, files)}
    return [
        Finding(
            Requirement.CORPUS,
            Status.OK,
            f"each of its mistakes ({', '.join(own)}) has a file of {shown(paths.corpus / MISTAKES)}/ "
            f"({counted(len(held), 'file')}){shared}",
        )
    ]


def _also(found: Record) -> str:
    """'L3, in `also`, needs none of its own': another exercise's mistake, whose file is that exercise's."""
    if len(found.also) == 1:
        return f"{found.also[0]}, in `also`, needs none of its own"
    return f"{', '.join(found.also[:-1])} and {found.also[-1]}, in `also`, need none of their own"


def _held(found: Record, mistake: str, files: list[MistakeFile]) -> list[MistakeFile]:
    return [file for file in files if file.holds(found, mistake)]


def _no_file(found: Record, mistake: str, files: list[MistakeFile], paths: Paths) -> str:
    """What to write, and where, for `mistake`; a file named for it that does not count says why."""
    named = [file for file in files if mistake in file.named.split("+") and file.function in ("", found.key)]
    if named:
        said = f"{shown(named[0].path)} is named for it, but {_why_not(named[0], found)}"
        return f"mistake {mistake} has no corpus file that counts: {said}"
    kind = "class" if "." in found.function else "function"
    return (
        f"mistake {mistake} has no corpus file: write {shown(paths.corpus / MISTAKES)}/{mistake}_<name>.py, its "
        f"first line '# module: {found.module}  function: {found.key}  mistake: {mistake}', then the whole "
        f"{kind} {found.key} as a student writes it with {mistake}: it is appended after the reference module "
        f"({REFERENCE}/{found.module}.py), so only it differs"
    )


def _why_not(file: MistakeFile, found: Record) -> str:
    """Why a file named for a mistake of the function is not the function's file of it."""
    if not file.function:
        return f"its first line is not '# module: {found.module}  function: {found.key}  mistake: {file.named}'"
    if file.module != found.module:
        return f"its first line declares module {file.module}: {found.key} is in {found.module}"
    return f"its first line declares mistake: {file.mistake} and its name starts {file.named}_: make them the same"

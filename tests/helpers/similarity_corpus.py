"""The similarity corpus as a roster on disk: each student's exercises/, the stubs with their modules written over."""

import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "corpus"  # tests/corpus
ROSTER = CORPUS / "similarity" / "roster.toml"
MODULES = ("recurrence", "padding", "initialisation", "language_model", "classifier", "baseline")


@dataclass(frozen=True)
class Student:
    """One student of the corpus: their module files, and whom they copy."""

    name: str
    modules: dict[str, Path | tuple[Path, ...]]  # a whole module, or files of one function each (correct/'s)
    copies: tuple[str, ...]  # whom it copies (none: independent; "solutions": the reference)
    disguise: str

    @property
    def function_files(self) -> dict[str, tuple[Path, ...]]:
        """Module -> its files of one function each, for the modules written that way."""
        return {module: files for module, files in self.modules.items() if isinstance(files, tuple)}

    def source(self, module: str, exercises: Path) -> str:
        """The module as the student's fork holds it: the whole file, or the stub with each function's file after it
        (the last definition is the one Python and the comparison keep)."""
        files = self.modules[module]
        if isinstance(files, Path):
            return files.read_text(encoding="utf-8")
        texts = [(exercises / f"{module}.py").read_text(encoding="utf-8")]
        return "\n\n".join(texts + [path.read_text(encoding="utf-8") for path in files])


def _files(entry: str | list[str]) -> Path | tuple[Path, ...]:
    return CORPUS / entry if isinstance(entry, str) else tuple(CORPUS / path for path in entry)


def students() -> list[Student]:
    table = tomllib.loads(ROSTER.read_text(encoding="utf-8"))["students"]
    return [
        Student(
            name,
            {module: _files(entry[module]) for module in MODULES if module in entry},
            tuple([entry["copies"]] if isinstance(entry.get("copies"), str) else entry.get("copies", [])),
            entry.get("disguise", ""),
        )
        for name, entry in table.items()
    ]


def write_roster(target: Path, exercises: Path, chosen: list[Student] | None = None) -> Path:
    """Write the roster into target (one folder per student); return target."""
    for student in students() if chosen is None else chosen:
        folder = target / student.name / "exercises"
        shutil.copytree(exercises, folder, ignore=shutil.ignore_patterns("tests", "__pycache__"))
        for module in student.modules:
            (folder / f"{module}.py").write_text(student.source(module, exercises), encoding="utf-8")
    return target

"""The similarity corpus as a roster on disk: each student's exercises/, the stubs with their modules replaced."""

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
    modules: dict[str, Path]
    copies: tuple[str, ...]  # whom it copies (none: independent; "solutions": the reference)
    disguise: str


def students() -> list[Student]:
    table = tomllib.loads(ROSTER.read_text(encoding="utf-8"))["students"]
    return [
        Student(
            name,
            {module: CORPUS / entry[module] for module in MODULES if module in entry},
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
        for module, path in student.modules.items():
            shutil.copy(path, folder / f"{module}.py")
    return target

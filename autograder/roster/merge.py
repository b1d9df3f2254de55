"""`autograde merge SOURCE... --out RESULTS_DIR`: a roster's gradings from several runs, the newest per student.

A roster graded in parts (a first run, then re-runs of a few students or of a shard) leaves several
folders of gradings, one subfolder per student (its name: the repository as `owner__name`). The merge
copies each student's newest grading into RESULTS_DIR: the one with the latest `graded-at` (written by
the roster workflow; a grading without it counts as the oldest), the later source on a tie. A newer
grading wins even when it failed: it is what the last run saw, and the gradebook says why. Every student
whose grading gives no grade (cut short by its shard's time, a grader error) is named, with the reason. When
the gradings kept were made by different graders (their fingerprints differ), `mixed` says so; when they were
graded by different rubrics (results.json's extra_data.rubric), nothing is merged: no gradebook could read them.
"""

import json
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from autograder.fingerprint import recorded
from autograder.grading import rubric_record
from autograder.roster import gradebook
from autograder.rubric import RubricError

OLDEST = datetime.min.replace(tzinfo=UTC)


class MergeError(ValueError):
    """Sources or a target that cannot be merged."""


@dataclass(frozen=True)
class Pick:
    student: str  # the folder's name
    source: Path  # the folder copied
    others: int  # how many older gradings of this student were left out
    no_grade: str = ""  # why this grading gives the student no grade (cut, a grader error); '' when it may


def no_grade(folder: Path) -> str:
    """Why the grading in `folder` is no grade: its recorded error, a missing or unreadable results.json, a
    grader error; '' otherwise (the gradebook judges the rest against the rubric)."""
    error = folder / "error"
    if error.is_file():
        return (error.read_text(encoding="utf-8", errors="replace").strip().splitlines() or ["no results"])[0]
    try:
        document = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return "no results: its grading was cut (no results.json)"
    except (OSError, ValueError) as problem:
        return f"results.json unreadable ({type(problem).__name__})"
    tests = document.get("tests") if isinstance(document, dict) else None
    return gradebook.grader_fault(tests) if isinstance(tests, list) else ""


def graded_at(folder: Path) -> datetime:
    """When the grading in `folder` was made; OLDEST when that is not recorded or not a timestamp."""
    try:
        moment = datetime.fromisoformat((folder / "graded-at").read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return OLDEST
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def newest(sources: list[Path]) -> list[Pick]:
    """Each student's newest grading among the sources, by name."""
    found: dict[str, list[Path]] = {}
    for source in sources:
        for folder in sorted(path for path in source.iterdir() if path.is_dir()):
            found.setdefault(folder.name, []).append(folder)
    picks = []
    for student, folders in sorted(found.items()):
        # max() keeps the first of equals: reversed, so the later source wins a tie
        best = max(reversed(folders), key=graded_at)
        picks.append(Pick(student, best, len(folders) - 1, no_grade(best)))
    return picks


def students(sources: list[Path]) -> dict[str, str]:
    """Each student folder of the sources by its name, with whom it grades (as the later source records it)."""
    found: dict[str, str] = {}
    for source in sources:
        if source.is_dir():
            found.update(gradebook.students(source))
    return found


def merge(sources: list[Path], out: Path) -> list[Pick]:
    """Copy each student's newest grading from `sources` into `out`, which must be new or empty."""
    for source in sources:
        if not source.is_dir():
            raise MergeError(f"{source} is not a folder of gradings")
        if source.resolve() == out.resolve():
            raise MergeError(f"{out} is one of the sources: merge into a new folder")
    if out.exists() and any(out.iterdir()):
        raise MergeError(f"{out} is not empty: merge into a new folder (nothing is overwritten)")
    picks = newest(sources)
    one_rubric(picks)
    out.mkdir(parents=True, exist_ok=True)
    for pick in picks:
        shutil.copytree(pick.source, out / pick.student)
    return picks


def one_rubric(picks: list[Pick]) -> None:
    """Refuse (MergeError) gradings kept that were graded by different rubrics: no gradebook could read them by one."""
    try:
        rubric_record.agreed(
            rubric_record.texts(path for pick in picks for path in rubric_record.of_student(pick.source))
        )
    except RubricError as error:
        raise MergeError(f"nothing merged: {error}") from None


def _stamp(results: Path) -> str | None:
    """The fingerprint a grading's results.json records; None when it holds no grade (unreadable, failed)."""
    try:
        document = json.loads(results.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    extra = document.get("extra_data") if isinstance(document, dict) else None
    if not isinstance(extra, dict) or extra.get("grading_error"):
        return None
    return recorded(document)


def mixed(picks: list[Pick], out: Path) -> str:
    """The warning when the merged gradings were made by different graders; '' when one grader made them all."""
    stamps = (_stamp(out / pick.student / "results.json") for pick in picks)
    return gradebook.mixed_graders([stamp for stamp in stamps if stamp is not None])

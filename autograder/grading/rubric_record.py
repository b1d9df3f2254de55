"""The rubric a grading used, as results.json records it, and the one a roster's gradings were graded by.

Each results.json keeps, beside its fingerprint, the rubric file's text and its sha256
(`extra_data.rubric`): the gradebook, the class report and a merge then use the rubric that graded,
not whichever file is at hand. Gradings that disagree, or a --rubric other than theirs, are refused
(RubricError, one line); a grading without the record (an older grader's) is taken to be by the grader's
own rubric, as before the record existed.
"""

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

from autograder import rubric
from autograder.roster.gradebook import ON_TIME
from autograder.rubric import Rubric, RubricError

KEY = "rubric"  # results.json's extra_data.rubric: {"sha256": ..., "text": ...}
SHOWN = 12  # hex digits of a rubric's sha256 shown in a message


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def record(graded_by: Rubric) -> dict[str, str]:
    """results.json's extra_data.rubric for a grading by `graded_by`: its file's whole text (the instructor's,
    a few kB), whatever --only narrowed."""
    return {"sha256": sha256(graded_by.text), "text": graded_by.text}


def recorded(document: object) -> str | None:
    """The rubric text a results.json document records; None when it records none or a text its hash belies."""
    extra = document.get("extra_data") if isinstance(document, dict) else None
    found = extra.get(KEY) if isinstance(extra, dict) else None
    text = found.get("text") if isinstance(found, dict) else None
    return text if isinstance(text, str) and found.get("sha256") == sha256(text) else None


def _read(results: Path) -> str | None:
    try:
        return recorded(json.loads(results.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None  # the gradebook says what is wrong with this grading


def of_student(folder: Path) -> list[Path]:
    """The results.json files of one student's folder: their grading, and their on-time one (keep = "better")."""
    return [path for path in (folder / "results.json", folder / ON_TIME / "results.json") if path.is_file()]


def gradings(folders: Iterable[Path]) -> list[Path]:
    """Every results.json in these folders of gradings (one subfolder per student)."""
    return [
        path
        for folder in folders
        for student in sorted(folder.iterdir())
        if student.is_dir()
        for path in of_student(student)
    ]


def texts(files: Iterable[Path]) -> dict[str, list[Path]]:
    """Each rubric text recorded, with the gradings that record it (gradings without a record left out)."""
    found: dict[str, list[Path]] = {}
    for path in files:
        text = _read(path)
        if text is not None:
            found.setdefault(text, []).append(path)
    return found


def agreed(found: dict[str, list[Path]]) -> str | None:
    """The one rubric text all the gradings record (None when none records one); RubricError when they differ."""
    if len(found) > 1:
        parts = sorted(found.items(), key=lambda pair: -len(pair[1]))
        counts = ", ".join(f"{sha256(text)[:SHOWN]} by {len(paths)} (e.g. {paths[0]})" for text, paths in parts)
        raise RubricError(
            f"these gradings were graded by {len(found)} different rubrics ({counts}): grade them again with one"
        )
    return next(iter(found), None)


def graded_by(folders: Iterable[Path], given: Path | None = None) -> Rubric:
    """The rubric the gradings in `folders` were graded by: the one they record, else `given`, else the grader's
    own. A `given` rubric other than the recorded one is refused (RubricError)."""
    found = texts(gradings(folders))
    text = agreed(found)
    if text is None:
        return rubric.load(given)
    if given is not None:
        chosen = rubric.load(given)
        if sha256(chosen.text) != sha256(text):
            raise RubricError(
                f"--rubric {given} is not the rubric these gradings were graded by (sha256 {sha256(text)[:SHOWN]}, "
                f"recorded in their results.json): leave --rubric out to use that one"
            )
        return chosen
    return rubric.loads(text, found[text][0])

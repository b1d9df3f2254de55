"""`autograde gradescope OUT.zip`: the autograder bundle to upload to Gradescope.

The zip holds, at its root, `setup.sh` (Python 3.11+, CPU torch 2.13.0, then this grader
installed, not editable, from the source copy in `grader/`, its rubric.toml the one
`--rubric` names when given) and `run_autograder` (grades
/autograder/submission into /autograder/results/results.json through
`autograder.gradescope_run`, with the installed grader). The source copy is the grader's
packages (the grader, the reference it grades against, the stubs) as this grader has them, and a
pyproject.toml written from its installed metadata: the same bundle from a checkout or from an
installed grader, which has no pyproject.toml of its own. This project's tests and caches stay out.
"""

import importlib.metadata
import json
import zipfile
from pathlib import Path

from packaging.requirements import Requirement

from autograder.locations import PACKAGE, ROOT, RUBRIC, TEMPLATES

SOURCE_PACKAGES = ("autograder", "solutions", "exercises")
SKIPPED_PARTS = {"__pycache__", ".pytest_cache", ".ruff_cache"}
EXECUTABLE = 0o100755 << 16
REGULAR = 0o100644 << 16
BUILD_SYSTEM = '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n'


def source_files(root: Path = ROOT) -> list[Path]:
    """The files of the grader's packages under `root` (a checkout, or site-packages), relative to it."""
    found = []
    for package in SOURCE_PACKAGES:
        for path in sorted((root / package).rglob("*")):
            relative = path.relative_to(root)
            if path.is_file() and not SKIPPED_PARTS & set(relative.parts) and path.suffix not in (".pyc", ".pyo"):
                found.append(relative)
    return found


def distribution() -> importlib.metadata.Distribution:
    """The installed distribution this grader's package belongs to (editable or not)."""
    name = importlib.metadata.packages_distributions()["autograder"][0]
    return importlib.metadata.distribution(name)


def pyproject() -> str:
    """The source copy's packaging: this grader's name, version and runtime requirements, every package file."""
    installed = distribution()
    metadata = installed.metadata
    requires = [Requirement(text) for text in installed.requires or []]
    runtime = [str(one) for one in requires if one.marker is None or one.marker.evaluate({"extra": ""})]
    scripts = {point.name: point.value for point in installed.entry_points if point.group == "console_scripts"}
    project = [
        "[project]",
        f"name = {json.dumps(metadata['Name'])}",
        f"version = {json.dumps(metadata['Version'])}",
        f"description = {json.dumps(metadata['Summary'], ensure_ascii=False)}",
        f"requires-python = {json.dumps(metadata['Requires-Python'])}",
        f"dependencies = {json.dumps(runtime)}",
        "",
        "[project.scripts]",
        *(f"{name} = {json.dumps(value)}" for name, value in sorted(scripts.items())),
        "",
        "[tool.setuptools.packages.find]",
        f"include = {json.dumps([f'{package}*' for package in SOURCE_PACKAGES])}",
        "",
        "[tool.setuptools.package-data]",
        '"*" = ["*"]  # every file of every package folder: the rubric, the suites, the templates, the public tests',
        'autograder = ["*", "todos/*/*"]  # and each exercise\'s folder, autograder/todos/<key>/ (no package)',
    ]
    return BUILD_SYSTEM + "\n" + "\n".join(project) + "\n"


def _add(bundle: zipfile.ZipFile, name: str, data: bytes, mode: int) -> None:
    info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
    info.external_attr = mode
    info.compress_type = zipfile.ZIP_DEFLATED
    bundle.writestr(info, data)


def build(out: Path, root: Path = ROOT, rubric_text: str | None = None) -> list[str]:
    """Write the bundle; return the names it holds. `rubric_text`: the rubric it grades by (a section's), shipped
    as the grader's own rubric.toml, which Gradescope's grading reads; None ships the grader's own."""
    out.parent.mkdir(parents=True, exist_ok=True)
    shipped = RUBRIC.relative_to(PACKAGE.parent)
    with zipfile.ZipFile(out, "w") as bundle:
        _add(bundle, "setup.sh", (TEMPLATES / "gradescope-setup.sh").read_bytes(), EXECUTABLE)
        _add(bundle, "run_autograder", (TEMPLATES / "gradescope-run_autograder").read_bytes(), EXECUTABLE)
        _add(bundle, "grader/pyproject.toml", pyproject().encode(), REGULAR)
        for relative in source_files(root):
            data = (root / relative).read_bytes()
            if relative == shipped and rubric_text is not None:
                data = rubric_text.encode("utf-8")
            _add(bundle, f"grader/{relative.as_posix()}", data, REGULAR)
        return bundle.namelist()

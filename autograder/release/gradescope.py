"""`autograde gradescope OUT.zip`: the autograder bundle to upload to Gradescope.

The zip holds, at its root, `setup.sh` (Python 3.11+, CPU torch 2.13.0, then this grader
installed from the source copied into `grader/`) and `run_autograder` (grades
/autograder/submission into /autograder/results/results.json through
`autograder.gradescope_run`). The source copy is the grader package, the reference it grades
against and the packaging files; this project's tests and caches stay out.
"""

import zipfile
from pathlib import Path

from autograder.locations import ROOT, TEMPLATES

SOURCE_FILES = ("pyproject.toml", "README.md")
SOURCE_PACKAGES = ("autograder", "solutions", "exercises")
SKIPPED_PARTS = {"__pycache__", ".pytest_cache", ".ruff_cache"}
EXECUTABLE = 0o100755 << 16
REGULAR = 0o100644 << 16


def source_files(root: Path = ROOT) -> list[Path]:
    """The files of the grader's source copy, relative to root."""
    found = [Path(name) for name in SOURCE_FILES]
    for package in SOURCE_PACKAGES:
        for path in sorted((root / package).rglob("*")):
            relative = path.relative_to(root)
            if path.is_file() and not SKIPPED_PARTS & set(relative.parts) and path.suffix not in (".pyc", ".pyo"):
                found.append(relative)
    return found


def _add(bundle: zipfile.ZipFile, name: str, data: bytes, mode: int) -> None:
    info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
    info.external_attr = mode
    info.compress_type = zipfile.ZIP_DEFLATED
    bundle.writestr(info, data)


def build(out: Path, root: Path = ROOT) -> list[str]:
    """Write the bundle; return the names it holds."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w") as bundle:
        _add(bundle, "setup.sh", (TEMPLATES / "gradescope-setup.sh").read_bytes(), EXECUTABLE)
        _add(bundle, "run_autograder", (TEMPLATES / "gradescope-run_autograder").read_bytes(), EXECUTABLE)
        for relative in source_files(root):
            _add(bundle, f"grader/{relative.as_posix()}", (root / relative).read_bytes(), REGULAR)
        return bundle.namelist()

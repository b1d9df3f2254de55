"""What Gradescope's `run_autograder` runs: grade /autograder/submission into /autograder/results.

    python -m autograder.gradescope_run [--require-isolation] [ROOT]     # ROOT defaults to /autograder

A submission uploaded from GitHub holds `exercises/`; one uploaded as a zip of the repository
folder holds it one level down; one uploaded as loose files is the modules themselves; a zip
left as it was uploaded is unpacked here first. All four are graded, read as data whatever
Gradescope's own unzip made of the upload: no link is followed, no module over the size limit or
beyond the count is read (`autograder.grading.submission`), and a zip is unpacked entry by entry, its
links, special files, absolute paths and `..` left out and listed. The exit status is 0 whenever
results.json was written (a grading refused for want of isolation included: it then gives the
reason).
"""

import os
import stat
import sys
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

import autograder
from autograder import commands
from autograder.grading.submission import (
    MAX_DEPTH,
    MAX_ENTRIES,
    MAX_MODULE_BYTES,
    MAX_MODULES,
    LeftOut,
    Submission,
    Why,
    entries,
)


def _is_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def find_submission(folder: Path, staging: Path | None) -> Submission:
    """Where the student's modules are; a zip found alone is unpacked into `staging` first."""
    found = dict(entries(folder)) if _is_folder(folder) else {}
    if stat.S_ISDIR(found.get("exercises", 0)):
        return Submission(folder)
    nested = [
        name for name, mode in sorted(found.items()) if stat.S_ISDIR(mode) and _is_folder(folder / name / "exercises")
    ]
    if len(nested) == 1:
        return Submission(folder, f"{nested[0]}/exercises")
    if any(name.endswith(".py") for name in found):  # links too: they are listed as not read
        return Submission(folder, ".")
    archives = [name for name, mode in found.items() if name.endswith(".zip") and stat.S_ISREG(mode)]
    if len(archives) == 1 and staging is not None:
        left_out = unpack(folder / archives[0], staging)
        inside = find_submission(staging, None)
        return Submission(inside.root, inside.package, (*left_out, *inside.left_out))
    return Submission(folder)  # grading reports that there is no exercises/ folder


def unpack(archive: Path, staging: Path) -> list[LeftOut]:
    """Write the zip's Python files into `staging`, each a regular entry inside it within the limits;
    return every other entry, and why it was left out."""
    staging.mkdir(parents=True, exist_ok=True)
    left_out: list[LeftOut] = []
    written = 0
    try:
        with archive.open("rb") as handle, zipfile.ZipFile(handle) as bundle:
            for info in bundle.infolist()[:MAX_ENTRIES]:
                why = _entry_problem(info, written)
                if why is None:
                    why = _write_entry(bundle, info, staging)
                    written += why is None
                if why is not None and not info.is_dir():
                    left_out.append(LeftOut(info.filename, why, info.file_size if why is Why.TOO_BIG else 0))
    except (OSError, zipfile.BadZipFile, ValueError):
        left_out.append(LeftOut(archive.name, Why.UNREADABLE))
    return left_out


def _entry_problem(info: zipfile.ZipInfo, written: int) -> Why | None:
    """Why an entry is not unpacked, from its header alone."""
    mode = info.external_attr >> 16
    path = PurePosixPath(info.filename)
    if stat.S_ISLNK(mode):
        return Why.LINK
    if not path.parts or info.filename.startswith(("/", "\\")) or ".." in path.parts:
        return Why.UNSAFE_PATH
    if len(path.parts) > MAX_DEPTH:
        return Why.TOO_DEEP
    if info.is_dir():
        return None
    if mode and not stat.S_ISREG(mode):
        return Why.SPECIAL
    if not info.filename.endswith(".py"):
        return Why.NOT_GRADED
    if info.file_size > MAX_MODULE_BYTES:
        return Why.TOO_BIG
    return Why.TOO_MANY if written >= MAX_MODULES else None


def _write_entry(bundle: zipfile.ZipFile, info: zipfile.ZipInfo, staging: Path) -> Why | None:
    """One entry written as a new regular file (never over one already there); why not, when it fails."""
    if info.is_dir():
        return None
    target = staging.joinpath(*PurePosixPath(info.filename).parts)
    try:
        with bundle.open(info) as source:
            data = source.read(MAX_MODULE_BYTES + 1)  # the header's size may lie
        if len(data) > MAX_MODULE_BYTES:
            return Why.TOO_BIG
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("xb") as written:
            written.write(data)
    except FileExistsError:
        return Why.DUPLICATE
    except (OSError, zipfile.BadZipFile, NotImplementedError, RuntimeError, ValueError, EOFError):
        return Why.UNREADABLE
    return None


def main(argv: list[str]) -> int:
    require = "--require-isolation" in argv[1:]
    arguments = [argument for argument in argv[1:] if argument != "--require-isolation"]
    root = Path(arguments[0]) if arguments else Path("/autograder")
    results = root / "results"
    print(f"grader: {Path(autograder.__file__).parent}")
    with tempfile.TemporaryDirectory(prefix="gradescope-") as staging:
        submission = find_submission(root / "submission", Path(staging) / "upload")
        commands.grade_command(submission, results, None, None, require or None)
    return 0 if (results / "results.json").is_file() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))

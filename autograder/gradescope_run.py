"""What Gradescope's `run_autograder` runs: grade /autograder/submission into /autograder/results.

    python -m autograder.gradescope_run [--require-isolation] [ROOT]     # ROOT defaults to /autograder

A submission uploaded from GitHub holds `exercises/`; one uploaded as a zip of the repository
folder holds it one level down; one uploaded as loose files is the modules themselves. All
three are graded. The exit status is 0 whenever results.json was written (a grading refused for
want of isolation included: results.json then gives the reason).
"""

import shutil
import sys
import tempfile
from pathlib import Path

import autograder
from autograder import commands


def find_submission(folder: Path, staging: Path) -> Path:
    """The folder holding `exercises/`, staging loose modules into one when needed."""
    if (folder / "exercises").is_dir():
        return folder
    nested = sorted(path.parent for path in folder.glob("*/exercises") if path.is_dir())
    if len(nested) == 1:
        return nested[0]
    loose = sorted(path for path in folder.glob("*.py") if path.is_file())
    if loose:
        (staging / "exercises").mkdir(parents=True)
        for path in loose:
            shutil.copyfile(path, staging / "exercises" / path.name)
        return staging
    return folder  # grading reports that there is no exercises/ folder


def main(argv: list[str]) -> int:
    require = "--require-isolation" in argv[1:]
    arguments = [argument for argument in argv[1:] if argument != "--require-isolation"]
    root = Path(arguments[0]) if arguments else Path("/autograder")
    results = root / "results"
    print(f"grader: {Path(autograder.__file__).parent}")
    with tempfile.TemporaryDirectory(prefix="gradescope-") as staging:
        submission = find_submission(root / "submission", Path(staging))
        commands.grade_command(submission, results, None, None, require or None)
    return 0 if (results / "results.json").is_file() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""nbgrader autograde time per notebook, from one run on this machine.

    python benchmarks/bench_notebooks.py

Builds the course (`autograde nbgrader`), runs `nbgrader generate_assignment`, submits the
source notebooks as one student's and the untouched release as another's, then times
`nbgrader autograde week07 --student S --notebook N` once per notebook and student: a kernel
start, the imports, the notebook's cells and the gradebook writes.
"""

import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.release import nbgrader_course

STUDENTS = {"reference": "source", "untouched": "release"}


def nbgrader(course: Path, *arguments: str) -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "nbgrader", *arguments], cwd=course, check=True, capture_output=True)
    return time.monotonic() - started


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-notebooks-") as folder:
        course = Path(folder)
        nbgrader_course.build_course(course)
        print(f"generate_assignment: {nbgrader(course, 'generate_assignment', nbgrader_course.ASSIGNMENT):.1f} s")
        for student, step in STUDENTS.items():
            target = course / "submitted" / student / nbgrader_course.ASSIGNMENT
            target.mkdir(parents=True)
            for path in (course / step / nbgrader_course.ASSIGNMENT).glob("*.ipynb"):
                target.joinpath(path.name).write_bytes(path.read_bytes())
        print(f"{'notebook':16} " + " ".join(f"{student:>10}" for student in STUDENTS))
        totals = dict.fromkeys(STUDENTS, 0.0)
        for module in nbgrader_course.MODULES:
            row = []
            for student in STUDENTS:
                seconds = nbgrader(
                    course,
                    "autograde",
                    nbgrader_course.ASSIGNMENT,
                    "--student",
                    student,
                    "--notebook",
                    module,
                    "--force",
                )
                totals[student] += seconds
                row.append(f"{seconds:9.1f}s")
            print(f"{module:16} " + " ".join(row))
        print(f"{'total':16} " + " ".join(f"{totals[student]:9.1f}s" for student in STUDENTS))
        print(f"({platform.processor() or platform.machine()}, {sys.version.split()[0]})")


if __name__ == "__main__":
    main()

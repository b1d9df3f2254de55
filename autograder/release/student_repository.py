"""`autograde release DIR`: write the student repository.

What goes in: the generated stubs (`exercises/`), the public tests (`exercises/tests/`) with the
known mistakes' values on their inputs (`mistakes.json`), the grader's training recipe as a
command (`exercises/check_training/`), a README, a `pyproject.toml`, a `.gitignore` and the CI
workflow with its summary script (`--classroom`: reporting to GitHub Classroom). What never goes
in: the reference, the grader's checks and hidden tests, the variants' code, the grader's data seeds.
"""

import functools
import json
import re
import shutil
import tomllib
from collections.abc import Callable
from functools import partial
from pathlib import Path

from autograder import stubs
from autograder.checks import medians
from autograder.locations import LOCK, PUBLIC_TESTS, RUNTIME, SOLUTIONS, TEMPLATES
from autograder.release import classroom, readme
from autograder.release.public_tests import todo_map
from autograder.rubric import Rubric, load

WORKFLOW = ".github/workflows/public-tests.yml"
SCRIPTS = ".github/scripts"
MISTAKES = "exercises/tests/mistakes.json"  # the known mistakes' values on the public tests' inputs
CHECK_TRAINING = "exercises/check_training"  # python -m exercises.check_training
STUDENT_LOCK = "requirements.lock"  # the workflow's environment, with hashes: its cache is keyed on this file
PYPROJECT = TEMPLATES / "student-pyproject.toml"
LOCK_HEADER = """\
# The public tests' environment, locked with hashes: what .github/workflows/public-tests.yml installs into
# .venv when its cache holds none for this file (a push whose cache is warm installs nothing):
#
#    python -m pip install --require-hashes --no-deps -r requirements.lock
#
# For CPython 3.11 on Linux x86_64; torch is the CPU build (2.13.0+cpu), so nothing here can pull a CUDA build.
# Written by `autograde release` from the grader's own lock (autograder/requirements.lock): the same
# versions and hashes, the packages that pyproject.toml's dependencies need. Do not edit it by hand.
#
"""


class ReleaseError(Exception):
    """The release cannot be written (a non-empty target without --force)."""


def _clear(target: Path) -> None:
    """Remove everything in target except its .git folder."""
    for path in target.iterdir():
        if path.name == ".git":
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def mapping(todos: list[stubs.Todo]) -> dict:
    """What the summary script needs: the TODOs and which public test belongs to which."""
    return {
        "todos": [
            {"number": todo.number, "name": todo.name, "function": f"{todo.module}.{todo.function}"} for todo in todos
        ],
        "tests": todo_map(todos),
    }


def _json(value: object) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def training_check(rubric: Rubric) -> dict[str, Callable[[], bytes]]:
    """The grader's recipe (its own files but set_forget_bias's answer, with its stop rule), its settings, the rule of
    seeds decided early (`medians.py`), torch._dynamo's stand-in (`dynamo.py`), all the grader's own, and the
    command that runs it."""
    items = {recipe.name: recipe.settings for recipe in rubric.recipes}
    doc = '"""The grader\'s training recipe, run over your code: python -m exercises.check_training."""\n'
    return {
        f"{CHECK_TRAINING}/__init__.py": doc.encode,
        f"{CHECK_TRAINING}/__main__.py": (TEMPLATES / "check_training.py").read_bytes,
        f"{CHECK_TRAINING}/recipe.py": (RUNTIME / "training.py").read_bytes,
        f"{CHECK_TRAINING}/language_model.py": (RUNTIME / "language_model.py").read_bytes,
        f"{CHECK_TRAINING}/seeds.py": (RUNTIME / "seeds.py").read_bytes,
        f"{CHECK_TRAINING}/medians.py": Path(medians.__file__).read_bytes,
        f"{CHECK_TRAINING}/dynamo.py": (RUNTIME / "dynamo.py").read_bytes,
        f"{CHECK_TRAINING}/forget_gate.py": (TEMPLATES / "check_training_forget_gate.py").read_bytes,
        f"{CHECK_TRAINING}/settings.json": lambda: _json({"data_seeds": vars(student_seeds()), "items": items}),
    }


def files(todos: list[stubs.Todo], rubric: Rubric, classroom_workflow: bool = False) -> dict[str, bytes]:
    """Relative path -> content of every file of the release."""
    return {path: make() for path, make in makers(todos, rubric, classroom_workflow).items()}


def makers(todos: list[stubs.Todo], rubric: Rubric, classroom_workflow: bool = False) -> dict[str, Callable[[], bytes]]:
    """Relative path -> what makes its content, for every file of the release: its names alone cost nothing
    (the known mistakes' values take a minute to record)."""
    stub_texts = functools.cache(stubs.generate)
    out: dict[str, Callable[[], bytes]] = {
        f"exercises/{name}": partial(_stub, stub_texts, name)
        for name in sorted(path.name for path in SOLUTIONS.glob("*.py"))
    }
    for path in sorted(PUBLIC_TESTS.glob("*.py")):
        out[f"exercises/tests/{path.name}"] = path.read_bytes
    out[MISTAKES] = _mistakes
    out.update(training_check(rubric))
    out["README.md"] = lambda: readme.readme(todos, rubric).encode("utf-8")
    out["pyproject.toml"] = PYPROJECT.read_bytes
    out[STUDENT_LOCK] = student_lock
    out[".gitignore"] = (TEMPLATES / "student-gitignore").read_bytes
    out[WORKFLOW] = lambda: classroom.workflow(classroom_workflow).encode("utf-8")
    out[f"{SCRIPTS}/summarize.py"] = (TEMPLATES / "summarize.py").read_bytes
    out[f"{SCRIPTS}/todos.json"] = lambda: _json(mapping(todos))
    return out


def student_lock() -> bytes:
    """The grader's lock cut down to what the student's pyproject.toml needs: its dependencies and every package
    they pull in (by the lock's own `# via` lines), each with the grader's version and hashes."""
    blocks = _lock_blocks(LOCK.read_text(encoding="utf-8"))
    roots = {_name(spec) for spec in tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["dependencies"]}
    if roots - blocks.keys():
        raise ReleaseError(f"the grader's lock has no {sorted(roots - blocks.keys())}: update it (docs/maintaining.md)")
    wanted = set(roots)
    while grown := {name for name, (_, via) in blocks.items() if via & wanted and name not in wanted}:
        wanted |= grown
    return (LOCK_HEADER + "".join(text for name, (text, _) in sorted(blocks.items()) if name in wanted)).encode()


def _name(requirement: str) -> str:
    """A requirement's normalised project name ('scikit-learn>=1.3' -> 'scikit-learn')."""
    return re.split(r"[\s=<>!~\[;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _lock_blocks(text: str) -> dict[str, tuple[str, set[str]]]:
    """Each package of a pip-compile lock: its lines (pin, hashes, `# via`) and the packages that pull it in."""
    blocks: dict[str, tuple[str, set[str]]] = {}
    current = None
    for line in text.splitlines(keepends=True):
        if line[:1].isalnum():
            current = _name(line)
            blocks[current] = (line, set())
        elif current and line.startswith("    "):
            lines, via = blocks[current]
            named = line.strip().removeprefix("#").strip().removeprefix("via").strip()
            via |= {_name(named)} if line.strip().startswith("#") and named else set()
            blocks[current] = (lines + line, via)
        else:
            current = None  # a comment between packages, a blank line: not part of any
    return blocks


def student_seeds() -> object:
    """The data seeds the students' training check uses (imported here: it imports torch, which the grader
    must not pay for before its worker starts, when a grading asks for the release's file names)."""
    from autograder.checks.thresholds import STUDENT_SEEDS

    return STUDENT_SEEDS


def _mistakes() -> bytes:
    """mistakes.json: the known mistakes' values on the public tests' inputs (recorded with torch: imported here)."""
    from autograder.release import public_mistakes

    return (json.dumps(public_mistakes.values().shipped, separators=(",", ":")) + "\n").encode("utf-8")


def _stub(texts: Callable[[], dict[str, str]], name: str) -> bytes:
    return texts()[name].encode("utf-8")


@functools.cache
def shipped() -> frozenset[str]:
    """The path of every file a release ships (nothing of it made): what a fork holds that is not the student's."""
    return frozenset(makers(stubs.todos(), load()))


def release(
    target: Path, force: bool = False, classroom_workflow: bool = False, rubric: Rubric | None = None
) -> list[str]:
    """Write the student repository into target (from `rubric`, by default the grader's); return the files written."""
    if target.exists() and not target.is_dir():
        raise ReleaseError(f"{target} is a file, not a folder")
    if target.exists() and any(path.name != ".git" for path in target.iterdir()):
        if not force:
            raise ReleaseError(f"{target} is not empty: pass --force to replace its contents (.git is kept)")
        _clear(target)
    content = files(stubs.todos(), rubric or load(), classroom_workflow)
    for relative, data in content.items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return sorted(content)

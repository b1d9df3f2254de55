"""The submission corpus: students' mistakes are named, correct variants get full marks, feedback reads well.

`mistakes/<ID>_<name>.py` is the function a student writes with mistake <ID> of the catalogue
(shared/misconceptions.md), as it stands after the reference module it replaces: the submission
is that module with the file appended, so only that function is wrong. `correct/<function>_<name>.py`
is one function, correct but written differently from the reference, appended the same way: a new
function of the week gets files of its own and leaves its siblings' files alone. `losses/<name>.py` is,
like a file of mistakes/, one function appended after the reference module, holding a mistake that must
cost exactly the items its header declares (`loses:`) and name exactly the ids it declares (`names:`,
none when left out): validation that refuses a legal input, a mistake the catalogue does not name. The
first line of each file says which module it replaces and which function it holds (and, for a mistake,
which id it is; for a loss, which of its aspects lose points and which ids are named).

Each file is graded once per session, as the reference with its module replaced and with `--only`
its own function (for a mistake or a loss, with the module's other functions but the trainings it
cannot change: see `Entry.graded`); every test below reads the same results, those of the functions
the file is graded on. Correct files of one module that hold different functions are packed into one
submission (the reference module, each of them appended), so the module is graded once for all of
them. The modules of the week import nothing of one another, so files of different modules share a
grading (a `Sitting`: one submission per module, each module the reference's, one file's or one
pack's) and pay for one worker and one run of the hidden suites between them; a file that imports
another exercise module (a classifier reusing the student's padding.py) sits only where that module
is the reference's. The same files also run through the released public tests, each alone after the
reference (all of them in one interpreter): a push and the grade must agree on every function, and
the public tests name the mistakes they see.
"""

import ast
import contextlib
import json
import multiprocessing
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path

import pytest
from support import ROOT, SOLUTIONS, appended_to, build_submission, grade

from autograder import rubric, stubs
from autograder.checks.catalogue import CATALOGUE
from autograder.grading.results import GradingResult, ItemResult
from autograder.release import student_repository
from autograder.release.public_tests import todo_map
from autograder.roster.grade_all import run_zygote
from autograder.sandbox import zygote
from autograder.todos.completeness.corpus import CORRECT_HEADER, LOSSES_HEADER, MISTAKE_HEADER  # `todo check`'s too

CORPUS = Path(__file__).resolve().parent
NAMED = re.compile(r"\[([A-Z]\d)\]")  # a catalogue id leading a feedback
NAMED_ANYWHERE = re.compile(r"(?:^|: |\n)\[([A-Z]\d)\] ")  # every catalogue id a message names
IMPORTED = re.compile(r"^\s*(?:from|import)\s+exercises\.(\w+)", re.MULTILINE)  # another exercise module used

# module -> the graded functions it holds ("SequenceClassifier.forward" is graded as "SequenceClassifier")
MODULE_FUNCTIONS: dict[str, tuple[str, ...]] = {}
for _todo in stubs.todos():
    MODULE_FUNCTIONS.setdefault(_todo.module, ())
    MODULE_FUNCTIONS[_todo.module] += (_todo.function.split(".")[0],)

TRAINED = frozenset(
    recipe.function for recipe in rubric.load().recipes
)  # functions whose grading trains a model on the student's code
PARALLEL_GRADINGS = 2  # gradings at once; each is a grader process and its worker, mostly one busy at a time
SLOW_FUNCTIONS = ("SequenceClassifier",)  # its threshold items train the classifier 6 times: 15-25 s a grading
SLOWEST_FIRST = ("classifier", "language_model", "padding", "baseline", "recurrence", "initialisation")
MAX_LINES = 8  # and two more for each mistake named beyond the first (its explanation and lesson)
MAX_LINE_LENGTH = 200  # a longer line is a tensor or a list printed whole
NOISE = ("autograder/", "Traceback (most recent call last)", "AssertionError", "____", "def test_")
SOLUTION_LINES = sorted(
    {line.strip() for todo in stubs.todos() for line in todo.solution.splitlines() if len(line.strip()) > 25}
)


class Kind(Enum):
    """Which folder of the corpus a file is in: what it is, and so what its tests expect of it."""

    CORRECT = "correct"  # one function, right but written otherwise, after the reference module: full marks
    MISTAKE = "mistakes"  # one function with a catalogued mistake, after the reference module: the mistake named
    LOSS = "losses"  # one function, after the reference module: exactly the declared items lost, the declared ids named


@dataclass(frozen=True)
class Entry:
    """One corpus file and what its first line declares."""

    path: Path
    module: str
    functions: tuple[str, ...]  # the function its header names
    mistake: str | None = None  # the catalogue ids it must name, "+"-joined: a mistakes/ id ("K3+S5"), a loss's names
    kind: Kind = Kind.CORRECT
    loses: tuple[str, ...] = ()  # a file of losses/: the aspects of its function that lose points, no other

    @property
    def ids(self) -> list[str]:
        """The catalogue ids the file's mistake names (two for a pair; none for a loss that declares none)."""
        return [] if self.mistake is None else self.mistake.split("+")

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def text(self) -> str:
        """The file as written: only what differs from the reference module."""
        return self.path.read_text(encoding="utf-8")

    @property
    def source(self) -> str:
        """The module with this file alone appended: the reference's, but for the file's function."""
        return appended_to(self.module, self.text)

    @property
    def graded(self) -> tuple[str, ...]:
        """What `--only` grades for this file, and so the items that are its own.

        A correct file is graded on its function alone: the files packed beside it are graded on theirs.
        A file of mistakes/ or losses/ is graded with the module's correct functions (they must keep full
        marks) but those with threshold items that it does not change: those items train that function
        alone, which is the reference's there (the reference's own grading shows them full), and a
        classifier's trainings are most of a grading's time.
        """
        if self.kind is Kind.CORRECT:
            return self.functions
        functions = MODULE_FUNCTIONS.get(self.module, ())
        return tuple(function for function in functions if function in self.functions or function not in TRAINED)

    @property
    def definitions(self) -> dict[str, str]:
        """Each name the file binds at its top level (its function, an import, a helper) -> that statement."""
        found = {}
        for statement in ast.parse(self.text).body:
            for name in bound_names(statement):
                found[name] = ast.unparse(statement)
        return found

    def packs_with(self, other: "Entry") -> bool:
        """Whether the two files can be appended to one submission of their module, each still graded as itself:
        two correct files of different functions that bind no name two ways (a helper of each, called alike)."""
        both_correct = self.kind is Kind.CORRECT and other.kind is Kind.CORRECT
        if not both_correct or set(self.functions) & set(other.functions):
            return False
        mine, theirs = self.definitions, other.definitions
        return all(mine[name] == theirs[name] for name in mine.keys() & theirs.keys())

    @property
    def imports(self) -> frozenset[str]:
        """The other exercise modules its code imports (the student's own, as submitted beside it)."""
        return frozenset(IMPORTED.findall(self.source)) - {self.module}


def bound_names(statement: ast.stmt) -> list[str]:
    """The names a top-level statement binds: a definition's, an import's, an assignment's targets."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [statement.name]
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return [alias.asname or alias.name.split(".")[0] for alias in statement.names]
    targets = statement.targets if isinstance(statement, ast.Assign) else [getattr(statement, "target", None)]
    return [
        node.id for target in targets if target is not None for node in ast.walk(target) if isinstance(node, ast.Name)
    ]


@dataclass
class Sitting:
    """Corpus files graded together: one submission per module (one file, or correct files that pack together),
    and none beside a file of a module it imports."""

    entries: list[Entry] = field(default_factory=list)

    def admits(self, entry: Entry) -> bool:
        modules = {other.module for other in self.entries}
        imported = {module for other in self.entries for module in other.imports}
        if entry.module in imported or entry.imports & modules:
            return False
        return all(entry.packs_with(other) for other in self.entries if other.module == entry.module)

    @property
    def edits(self) -> dict[str, str]:
        """Module -> its source: the reference module with each of the sitting's files of it appended."""
        texts: dict[str, list[str]] = {}
        for entry in self.entries:
            texts.setdefault(entry.module, []).append(entry.text)
        return {module: appended_to(module, "\n\n".join(files)) for module, files in texts.items()}

    @property
    def only(self) -> list[str]:
        return list(dict.fromkeys(function for entry in self.entries for function in entry.graded))


def sittings(entries: list[Entry]) -> list[Sitting]:
    """The entries, in order, each in the first sitting that admits it (a new one when none does)."""
    found: list[Sitting] = []
    for entry in entries:
        sitting = next((sitting for sitting in found if sitting.admits(entry)), None)
        if sitting is None:
            sitting = Sitting()
            found.append(sitting)
        sitting.entries.append(entry)
    return found


def own_items(result: GradingResult, entry: Entry) -> GradingResult:
    """A sitting's grading as the entry's own: the items of the functions it is graded on."""
    return replace(result, items=[item for item in result.items if item.function in entry.graded])


def _entry(path: Path) -> Entry:
    header = (path.read_text(encoding="utf-8").splitlines() or [""])[0]
    if path.parent.name == "mistakes":
        match = MISTAKE_HEADER.fullmatch(header)
        if match is None:
            raise ValueError(f"{path}: first line must be '# module: M  function: F  mistake: ID', got {header!r}")
        return Entry(path, match[1], (match[2],), match[3], Kind.MISTAKE)
    if path.parent.name == "losses":
        match = LOSSES_HEADER.fullmatch(header)
        if match is None:
            form = "# module: M  function: F  loses: a,b[  names: ID]"
            raise ValueError(f"{path}: first line must be '{form}', got {header!r}")
        return Entry(path, match[1], (match[2],), match[4], Kind.LOSS, tuple(match[3].split(",")))
    match = CORRECT_HEADER.fullmatch(header)
    if match is None:
        raise ValueError(f"{path}: first line must be '# module: M  function: F', got {header!r}")
    return Entry(path, match[1], (match[2],))


MISTAKES = [_entry(path) for path in sorted((CORPUS / "mistakes").glob("*.py"))]
CORRECT = [_entry(path) for path in sorted((CORPUS / "correct").glob("*.py"))]
LOSSES = [_entry(path) for path in sorted((CORPUS / "losses").glob("*.py"))]
EVERYTHING = MISTAKES + CORRECT + LOSSES
ASPECTS: dict[str, set[str]] = {}  # function -> the aspects its rubric items grade ("legal_inputs", ...)
for _item in rubric.load().items:
    ASPECTS.setdefault(_item.function, set()).add(_item.aspect)


Grader = Callable[[Entry], GradingResult]


def cases(entries: list[Entry]) -> list:
    """One parameter per file, named by it; marked slow when grading it trains models for long."""
    return [
        pytest.param(entry, id=entry.name, marks=[pytest.mark.slow] if set(SLOW_FUNCTIONS) & set(entry.graded) else [])
        for entry in entries
    ]


@pytest.fixture(scope="session")
def graded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Grader]:
    """The grading of a corpus file, its own functions' items: graded once per session, in a sitting.

    Every file the session's selected tests need is placed in a sitting, the slowest modules first, and
    every sitting is submitted at the start to a small pool of processes (each grading runs in its own
    process and starts its own worker); a test waits only for its own file's sitting.
    """
    futures: dict[Path, Future[GradingResult]] = {}
    context = multiprocessing.get_context("spawn")  # no fork of a process that already runs torch threads
    warm = run_zygote()  # one for the session's gradings, as grade-all's run has
    address = warm.address if warm is not None else None
    pool = ProcessPoolExecutor(PARALLEL_GRADINGS, mp_context=context, initializer=zygote.use, initargs=(address,))
    with contextlib.closing(warm) if warm is not None else contextlib.nullcontext(), pool:

        def submit(sitting: Sitting) -> None:
            folder = build_submission(tmp_path_factory.mktemp("sitting"), edits=sitting.edits)
            pending = pool.submit(grade, folder, sitting.only)
            futures.update({entry.path: pending for entry in sitting.entries})

        def result(entry: Entry) -> GradingResult:
            if entry.path not in futures:  # a test that selection did not foresee: a sitting of its own
                submit(Sitting([entry]))
            return own_items(futures[entry.path].result(), entry)

        for sitting in sittings(sorted(selected_entries(request.session), key=slowest_first)):
            submit(sitting)
        yield result
        for pending in futures.values():
            pending.cancel()


def slowest_first(entry: Entry) -> int:
    return SLOWEST_FIRST.index(entry.module) if entry.module in SLOWEST_FIRST else len(SLOWEST_FIRST)


def selected_entries(session: pytest.Session, fixture: str = "graded") -> list[Entry]:
    """The corpus files that this session's selected tests grade (or run through `fixture`)."""
    grading = [item for item in session.items if fixture in getattr(item, "fixturenames", ())]
    found = (item.callspec.params.get("entry") for item in grading if hasattr(item, "callspec"))
    return list(dict.fromkeys(entry for entry in found if isinstance(entry, Entry)))


def named(item: ItemResult) -> str | None:
    """The catalogue id a failed item's feedback leads with, if any."""
    match = NAMED.match(item.feedback)
    return match[1] if match else None


def named_all(feedback: str) -> set[str]:
    """Every catalogue id a message names (a pair names two, a line each)."""
    return set(NAMED_ANYWHERE.findall(feedback))


def shown(items: list[ItemResult]) -> str:
    return "\n\n".join(f"{item.name} ({item.score:g}/{item.max_score:g}):\n{item.feedback}" for item in items)


# -- the corpus itself ---------------------------------------------------------------------
def test_every_catalogue_mistake_has_a_student_submission():
    covered = {mistake for entry in MISTAKES for mistake in entry.ids}
    assert sorted(set(CATALOGUE) - covered) == []


@pytest.mark.parametrize("entry", EVERYTHING, ids=[entry.name for entry in EVERYTHING])
def test_each_corpus_file_declares_a_real_module_and_mistake(entry):
    assert entry.module in MODULE_FUNCTIONS, f"{entry.path.name}: no exercise module {entry.module!r}"
    assert set(entry.functions) <= set(entry.graded), f"{entry.path.name}: {entry.functions} not in {entry.module}"
    compile(entry.source, str(entry.path), "exec")
    for mistake in entry.ids:
        assert mistake in CATALOGUE, f"{entry.path.name}: {mistake} is not a catalogue id"
        assert entry.functions[0] in CATALOGUE[mistake].functions
    if entry.kind is Kind.MISTAKE:
        assert entry.name.startswith(f"{entry.mistake}_")
    if entry.kind is Kind.CORRECT:
        assert entry.name.startswith(f"{entry.functions[0]}_"), f"{entry.path.name}: name it <function>_<name>.py"
    unknown = sorted(set(entry.loses) - ASPECTS.get(entry.functions[0], set()))
    assert unknown == [], f"{entry.path.name}: {entry.functions[0]} has no item {', '.join(unknown)}"


def test_a_loss_header_declares_its_lost_aspects_and_the_ids_it_names(tmp_path):
    (tmp_path / "losses").mkdir()
    path = tmp_path / "losses" / "refuses.py"
    path.write_text("# module: recurrence  function: rnn_forward  loses: legal_inputs,output  names: R8+R1\n")
    assert _entry(path) == Entry(path, "recurrence", ("rnn_forward",), "R8+R1", Kind.LOSS, ("legal_inputs", "output"))
    assert _entry(path).ids == ["R8", "R1"]
    path.write_text("# module: recurrence  function: rnn_forward  loses: legal_inputs\n")
    assert _entry(path).ids == [] and _entry(path).loses == ("legal_inputs",)
    path.write_text("# module: recurrence  function: rnn_forward  mistake: R8\n")
    with pytest.raises(ValueError, match="loses: "):
        _entry(path)


def test_a_sitting_holds_one_submission_per_module_and_no_file_beside_a_module_it_imports():
    """A module's submission is one file, or correct files that pack together."""
    found = sittings(sorted(EVERYTHING, key=slowest_first))
    assert sorted(entry.name for sitting in found for entry in sitting.entries) == sorted(e.name for e in EVERYTHING)
    for sitting in found:
        modules = {entry.module for entry in sitting.entries}
        for entry in sitting.entries:
            others = [other for other in sitting.entries if other.module == entry.module and other is not entry]
            assert all(entry.packs_with(other) for other in others), [entry.name for entry in sitting.entries]
            assert not entry.imports & modules, f"{entry.name} imports {sorted(entry.imports)}, graded beside it"
    assert len(found) < len(EVERYTHING) / 2  # the point of sittings: far fewer gradings than files


def test_a_modules_correct_files_take_as_many_submissions_as_its_function_with_the_most_files():
    """Packing: a new function's correct files join its siblings' submissions instead of adding gradings."""
    found = sittings(sorted(CORRECT, key=slowest_first))
    for module in MODULE_FUNCTIONS:
        files = [
            [entry for entry in CORRECT if entry.module == module and function in entry.functions]
            for function in MODULE_FUNCTIONS[module]
        ]
        submissions = [sitting for sitting in found if module in sitting.edits]
        assert len(submissions) == max(map(len, files)), f"{module}: {[len(each) for each in files]} files"


def recurrence_file(folder: Path, name: str, text: str = "", kind: Kind = Kind.CORRECT) -> Entry:
    """A corpus file of recurrence.py, its function the start of its name ("rnn_forward_b" holds rnn_forward)."""
    function = next(function for function in MODULE_FUNCTIONS["recurrence"] if name.startswith(function))
    (folder / f"{name}.py").write_text(f"# module: recurrence  function: {function}\n{text}", encoding="utf-8")
    return Entry(folder / f"{name}.py", "recurrence", (function,), kind=kind)


def test_correct_files_of_one_module_pack_into_one_submission_when_they_hold_different_functions(tmp_path):
    loop, step = (recurrence_file(tmp_path, name, "import torch\n") for name in ("rnn_forward_a", "lstm_step_a"))
    (one,) = sittings([loop, step])
    assert one.only == ["rnn_forward", "lstm_step"]
    assert one.edits == {"recurrence": appended_to("recurrence", loop.text + "\n\n" + step.text)}
    apart = [
        recurrence_file(tmp_path, "rnn_forward_b"),  # the same function as loop's
        recurrence_file(tmp_path, "lstm_step_mistake", kind=Kind.MISTAKE),  # a mistake is graded alone
    ]
    assert [[e.name for e in sitting.entries] for sitting in sittings([loop, *apart])] == [
        ["rnn_forward_a"],
        ["rnn_forward_b"],
        ["lstm_step_mistake"],
    ]


def test_correct_files_that_bind_a_name_two_ways_are_not_packed_together(tmp_path):
    """Appended one after the other, the last binding would serve both files' functions."""
    step = recurrence_file(tmp_path, "lstm_step_helper", "def _gate(x):\n    return x\n")
    other = recurrence_file(tmp_path, "rnn_forward_other", "def _gate(x):\n    return -x\n")
    same = recurrence_file(tmp_path, "rnn_forward_same", "def _gate(x):\n    return x\n")
    assert not step.packs_with(other) and step.packs_with(same)
    assert [[e.name for e in sitting.entries] for sitting in sittings([step, other, same])] == [
        ["lstm_step_helper", "rnn_forward_same"],
        ["rnn_forward_other"],
    ]


def test_a_file_that_imports_another_exercise_module_sits_only_where_that_module_is_the_references(tmp_path):
    def entry(name: str, module: str, text: str = "") -> Entry:
        (tmp_path / f"{name}.py").write_text(f"# module: {module}  function: f\n{text}", encoding="utf-8")
        return Entry(tmp_path / f"{name}.py", module, ("f",))

    reuse = entry("reuse", "classifier", "from exercises.padding import gather_final\n")
    padding, other = entry("padding", "padding"), entry("other", "recurrence")
    assert reuse.imports == {"padding"}
    assert [[e.name for e in sitting.entries] for sitting in sittings([reuse, padding, other])] == [
        ["reuse", "other"],
        ["padding"],
    ]
    assert [[e.name for e in sitting.entries] for sitting in sittings([padding, reuse])] == [["padding"], ["reuse"]]


# -- grading the corpus ----------------------------------------------------------------------
@pytest.mark.parametrize("entry", cases(MISTAKES))
def test_it_names_the_mistake_in_a_student_submission(entry, graded):
    result = graded(entry)
    (function,) = entry.functions
    failed = [item for item in result.items if item.function == function and item.status != "passed"]
    assert failed, f"{entry.path.name}: every item of {function} passed"
    assert any(set(entry.ids) <= named_all(item.feedback) for item in failed), (
        f"no failed item of {function} names [{'] and ['.join(entry.ids)}]:\n\n{shown(failed)}"
    )
    misnamed = [item for item in failed if not named_all(item.feedback) <= set(entry.ids)]
    assert misnamed == [], f"an item names another mistake than [{entry.mistake}]:\n\n{shown(misnamed)}"
    others = [item for item in result.items if item.function != function and item.score < item.max_score]
    assert others == [], f"the correct functions of {entry.module} lost points:\n\n{shown(others)}"


@pytest.mark.parametrize("entry", cases(EVERYTHING))
def test_its_results_record_the_mistake_its_feedback_names(entry, graded):
    """The class report counts `tags`: they must say exactly what the feedback says."""
    for item in graded(entry).items:
        # every line that leads with [ID] names a mistake ("C3+C4" names two, a line each)
        leading = [match[1] for match in map(NAMED.match, item.feedback.splitlines()) if match]
        assert item.mistakes == leading, f"{item.name}:\n{item.feedback}"
        assert bool(item.failure) == (item.status != "passed"), f"{item.name}: failure {item.failure!r}"


@pytest.mark.parametrize("entry", cases(CORRECT))
def test_it_gives_full_marks_to_a_correct_variant(entry, graded):
    result = graded(entry)
    assert {item.function for item in result.items} == set(entry.graded)
    lost = [item for item in result.items if item.score < item.max_score]
    assert lost == [], f"{entry.name}: a correct {entry.functions[0]} lost points:\n\n{shown(lost)}"


@pytest.mark.parametrize("entry", cases(MISTAKES + LOSSES))  # a correct file fails nothing: no feedback to read
def test_its_feedback_reads_well(entry, graded):
    failed = [item for item in graded(entry).items if item.status != "passed"]
    assert failed, f"{entry.path.name}: every item passed, so there is no feedback to read"
    problems = [
        f"{item.name}: {'; '.join(found)}:\n{item.feedback}"
        for item in failed
        if (found := feedback_problems(item.feedback))
    ]
    assert problems == [], "\n\n".join(problems)


def feedback_problems(feedback: str) -> list[str]:
    """What keeps a failed item's feedback from reading well: length, noise, the reference's own code."""
    lines = feedback.splitlines()
    problems = [] if feedback.strip() else ["it is empty"]
    most = MAX_LINES + 2 * max(0, len(NAMED_ANYWHERE.findall(feedback)) - 1)
    if len(lines) > most:
        problems.append(f"{len(lines)} lines, more than {most}")
    problems += [f"it shows {noise!r}" for noise in NOISE if noise in feedback]
    problems += [f"a line of {len(line)} characters" for line in lines if len(line) > MAX_LINE_LENGTH]
    problems += [f"it shows the reference's line {line!r}" for line in SOLUTION_LINES if line in feedback]
    return problems


# -- the public tests, as a student's push runs them: one verdict, the same names -----------------------
# (corpus file, function) -> why the public tests and the grader may judge it differently: none so far.
DISAGREEMENTS: dict[tuple[str, str], str] = {}
PUBLIC_RUNS = Path(__file__).resolve().parents[1] / "helpers" / "public_runs.py"
TODOS = {todo.number: todo for todo in stubs.todos()}
PUBLIC_FUNCTION = {
    test: TODOS[number].function.split(".")[0] for test, number in todo_map(list(TODOS.values())).items()
}
PublicRun = dict[str, list[str]]  # "test_padding::test_x[params]" -> [outcome, its first line and named lines]


def public_job(entry: Entry) -> dict:
    """The public tests a corpus file is run through: its function's, the file alone after the reference."""
    modules = {path.stem: path.read_text(encoding="utf-8") for path in SOLUTIONS.glob("*.py")}
    modules[entry.module] = entry.source
    tests = [
        f"{test.replace('::', '.py::')}"
        for test, function in PUBLIC_FUNCTION.items()
        if test.startswith(f"test_{entry.module}::") and function in entry.functions
    ]
    return {"name": entry.name, "modules": modules, "tests": tests}


@pytest.fixture(scope="session")
def public_runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PublicRun]:
    """Each selected corpus file through the released public tests, all in one child interpreter."""
    entries = selected_entries(request.session, "public_runs")
    folder = tmp_path_factory.mktemp("public-runs")
    student_repository.release(folder / "release")
    (folder / "jobs.json").write_text(json.dumps([public_job(entry) for entry in entries]), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST")}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # a student's plain environment
    command = [sys.executable, str(PUBLIC_RUNS), str(folder / "release"), str(folder / "jobs.json")]
    child = subprocess.Popen(
        [*command, str(folder / "runs.json")],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    runs: dict[str, PublicRun] = {}

    def run(entry: Entry) -> PublicRun:
        if not runs:
            output, _ = child.communicate(timeout=1200)
            assert child.returncode == 0, f"the public runs failed:\n{output[-3000:]}"
            runs.update(json.loads((folder / "runs.json").read_text(encoding="utf-8")))
        return runs[entry.name]

    yield run
    child.kill()
    child.wait()


def public_verdict(run: PublicRun) -> dict[str, list[str]]:
    """Function -> the failures of its public tests ("test: first line"), for every function that ran."""
    verdict: dict[str, list[str]] = {}
    for test, (outcome, message) in run.items():
        failures = verdict.setdefault(PUBLIC_FUNCTION[test.split("[")[0]], [])
        if outcome != "passed":
            failures.append(f"{test}: {message}")
    return verdict


def grader_verdict(result: GradingResult) -> dict[str, list[ItemResult]]:
    """Function -> its items that lost points."""
    verdict: dict[str, list[ItemResult]] = {}
    for item in result.items:
        verdict.setdefault(item.function, [])
        if item.score < item.max_score:
            verdict[item.function].append(item)
    return verdict


@pytest.mark.parametrize("entry", cases(EVERYTHING))
def test_the_public_tests_and_the_grader_agree_on_every_function(entry, graded, public_runs):
    public, grader = public_verdict(public_runs(entry)), grader_verdict(graded(entry))
    assert public, f"{entry.name}: no public test ran"
    for function, failures in public.items():
        if bool(failures) != bool(grader[function]) and (entry.name, function) not in DISAGREEMENTS:
            pytest.fail(
                f"{entry.name}: {function} {'fails' if failures else 'passes'} its public tests but "
                f"{'loses points' if grader[function] else 'scores full marks'} in the grader:\n\n"
                + "\n".join(failures[:5])
                + f"\n\n{shown(grader[function])}"
            )


@pytest.mark.parametrize("entry", cases(MISTAKES))
def test_the_public_tests_name_the_mistake_the_grader_names(entry, graded, public_runs):
    """No mistake of the file is caught by one side only (in-place changes, L3, included): both name each id."""
    (function,) = entry.functions
    failures = public_verdict(public_runs(entry))[function]
    named_publicly = {match for failure in failures for match in NAMED_ANYWHERE.findall(failure)}
    named_by_grader = {
        match for item in grader_verdict(graded(entry))[function] for match in NAMED_ANYWHERE.findall(item.feedback)
    }
    unnamed = set(entry.ids) - named_publicly  # a pair in two branches (C3+C4) is named by two tests
    assert not unnamed, f"no public failure names [{'] and ['.join(sorted(unnamed))}]:\n" + "\n".join(failures)
    assert set(entry.ids) <= named_by_grader, f"the grader names {named_by_grader}, the file holds {entry.ids}"


# (corpus file, id) -> why only one side names that id on that file, by design. Every other id a side names on a
# corpus file, the other side names too: none so far.
NAMED_BY_ONE_SIDE: dict[tuple[str, str], str] = {}


def public_ids(run: PublicRun) -> dict[str, set[str]]:
    """Function -> every catalogue id its public failures name."""
    return {
        function: {mistake for failure in failures for mistake in NAMED_ANYWHERE.findall(failure)}
        for function, failures in public_verdict(run).items()
    }


def grader_ids(result: GradingResult, functions: set[str]) -> dict[str, set[str]]:
    """Function -> every catalogue id the feedback of its items that lost points names, for `functions`."""
    verdict = grader_verdict(result)
    return {
        function: {mistake for item in verdict.get(function, []) for mistake in named_all(item.feedback)}
        for function in functions
    }


@pytest.mark.parametrize("entry", cases(EVERYTHING))
def test_the_public_tests_and_the_grader_name_the_same_set_of_mistakes(entry, graded, public_runs):
    """Over every corpus file and every function its public tests ran: no id named by one side only (in-place
    changes, L3, included), but those NAMED_BY_ONE_SIDE lists with the reason."""
    public = public_ids(public_runs(entry))
    grader = grader_ids(graded(entry), set(public))
    differences = []
    for function in sorted(public):
        for side, ids in (
            ("public tests", public[function] - grader[function]),
            ("grader", grader[function] - public[function]),
        ):
            unlisted = sorted(mistake for mistake in ids if (entry.name, mistake) not in NAMED_BY_ONE_SIDE)
            if unlisted:
                differences.append(f"{function}: only the {side} name {', '.join(unlisted)}")
    assert differences == [], f"{entry.name}:\n" + "\n".join(differences)


# mistakes that explain every item and every public test they fail: each of them must name it
NAMED_ON_EVERY_FAILURE = ("R4", "R7")  # the loop over the batch axis, the steps stacked on dim 0: shapes show them


@pytest.mark.parametrize("entry", cases([entry for entry in MISTAKES if entry.mistake in NAMED_ON_EVERY_FAILURE]))
def test_an_axis_mistake_is_named_on_every_item_and_every_public_test_it_fails(entry, graded, public_runs):
    (function,) = entry.functions
    lost = grader_verdict(graded(entry))[function]
    unnamed = [item for item in lost if entry.mistake not in named_all(item.feedback)]
    assert unnamed == [], f"items that do not name [{entry.mistake}]:\n\n{shown(unnamed)}"
    failures = public_verdict(public_runs(entry))[function]
    silent = [failure for failure in failures if entry.mistake not in NAMED_ANYWHERE.findall(failure)]
    assert silent == [], "public failures that do not name it:\n" + "\n".join(silent)


# -- losses/: a mistake that costs exactly the items it touches, and is named only when named rightly ---------------
@pytest.mark.parametrize("entry", cases(LOSSES))
def test_a_loss_costs_exactly_the_items_it_declares(entry, graded):
    """Validation that refuses a legal input costs `legal_inputs` alone: no other item of the function, no other
    function."""
    (function,) = entry.functions
    lost = grader_verdict(graded(entry))
    declared = {rubric.item_name(function, aspect) for aspect in entry.loses}
    assert {item.name for item in lost[function]} == declared, shown(lost[function])
    others = [item for other, items in lost.items() if other != function for item in items]
    assert others == [], f"the correct functions of {entry.module} lost points:\n\n{shown(others)}"


@pytest.mark.parametrize("entry", cases(LOSSES))
def test_a_loss_names_exactly_the_ids_it_declares(entry, graded):
    """A wrong name costs more than none: only the ids the header declares (none without `names:`)."""
    (function,) = entry.functions
    lost = grader_verdict(graded(entry))[function]
    assert {mistake for item in lost for mistake in named_all(item.feedback)} == set(entry.ids), shown(lost)


@pytest.mark.parametrize("entry", cases(LOSSES))
def test_the_public_tests_fail_a_loss_and_name_exactly_its_ids(entry, public_runs):
    (function,) = entry.functions
    failures = public_verdict(public_runs(entry))[function]
    assert failures, f"{entry.name}: every public test of {function} passed"
    assert public_ids(public_runs(entry))[function] == set(entry.ids), "\n".join(failures)

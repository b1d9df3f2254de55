"""`autograde release DIR`: the student repository holds the stubs and public tests, and nothing hidden."""

import base64
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tomllib
import venv
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support import EXERCISES, ROOT, SOLUTIONS, code_without_docstrings

from autograder import cli, rubric, stubs, todos
from autograder.checks import catalogue, errors, medians, thresholds, variants
from autograder.locations import LOCK, PUBLIC_TESTS, RECORDINGS_VARIABLE, RUNTIME
from autograder.release import public_mistakes, recordings, student_repository
from autograder.release.public_tests import todo_map
from autograder.runtime import training
from autograder.student import InProcess, in_package

HIDDEN_NAMES = re.compile(rb"\bautograder\.|\b(solutions|variants|catalogue|suites)\b", re.IGNORECASE)
# Reference lines the public tests also write, on purpose (an idiom, an unpacking): shipped, not secret.
SHARED_WITH_PUBLIC_TESTS = {
    "for name, parameter in lstm.named_parameters():",
    "tokens, lengths, labels = batch",
}
TODO_LABEL = re.compile(r"TODO (\d+) ·")


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("student") / "repository"
    student_repository.release(target)
    return target


def every_file(root: Path) -> dict[str, bytes]:
    """Every file under root, hidden and ignored ones included, as bytes."""
    found = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder, name)
            found[path.relative_to(root).as_posix()] = path.read_bytes()
    return found


def searchable(name: str, data: bytes) -> str:
    """The text to search: a Python file without its docstrings, any other file as it is."""
    text = data.decode("utf-8", errors="replace")
    if name.endswith(".py"):
        try:
            return code_without_docstrings(text)
        except SyntaxError:
            return text
    return text


def test_it_writes_the_generated_stubs_and_the_public_tests_byte_for_byte(released):
    files = every_file(released)
    stubs_written = {name.removeprefix("exercises/"): data for name, data in files.items() if name.count("/") == 1}
    stubs_written = {name: data for name, data in stubs_written.items() if name.endswith(".py")}
    assert stubs_written == {name: text.encode("utf-8") for name, text in stubs.generate().items()}
    tests = {
        name.removeprefix("exercises/tests/"): data
        for name, data in files.items()
        if name.startswith("exercises/tests/") and name.endswith(".py")
    }
    assert tests == {path.name: path.read_bytes() for path in PUBLIC_TESTS.glob("*.py")}
    assert "conftest.py" in tests  # the seeds and the named mistakes travel with the public tests


def test_it_leaves_no_solution_code_in_any_released_file(released):
    texts = {name: searchable(name, data) for name, data in every_file(released).items()}
    for todo in stubs.todos():
        for line in todo.solution.splitlines():
            if len(line.strip()) > 25 and line.strip() not in SHARED_WITH_PUBLIC_TESTS:  # short lines: as test_stubs
                leaks = [name for name, text in texts.items() if line.strip() in text]
                assert not leaks, f"{todo.label}: {line.strip()!r} appears in {leaks}"


def test_it_names_no_hidden_module_in_any_released_file(released):
    for name, data in every_file(released).items():
        found = [match.group().decode() for match in HIDDEN_NAMES.finditer(data)]
        assert not found, f"{name} mentions {found}"


# -- the training check: the grader's recipe, on other data -----------------------------------------
def test_its_training_check_is_the_graders_own_recipe_settings_and_wording(released):
    check = released / student_repository.CHECK_TRAINING
    assert (check / "recipe.py").read_bytes() == (RUNTIME / "training.py").read_bytes()
    assert (check / "language_model.py").read_bytes() == (RUNTIME / "language_model.py").read_bytes()
    assert (check / "seeds.py").read_bytes() == (RUNTIME / "seeds.py").read_bytes()
    assert (check / "medians.py").read_bytes() == Path(medians.__file__).read_bytes()  # seeds decided early
    assert (check / "dynamo.py").read_bytes() == (RUNTIME / "dynamo.py").read_bytes()  # torch._dynamo's stand-in
    assert (check / "forget_gate.py").read_text().count("set_forget_bias(rnn, value)") == 1  # not the grader's own
    shipped = json.loads((check / "settings.json").read_text())["items"]
    assert shipped == {recipe.name: recipe.settings for recipe in rubric.load().recipes}


def test_its_training_check_trains_and_evaluates_on_rows_the_grader_never_uses(released):
    seeds = training.DataSeeds(
        **json.loads((released / student_repository.CHECK_TRAINING / "settings.json").read_text())["data_seeds"]
    )
    for recipe in rubric.load().recipes:
        grader = thresholds.GRADER_SEEDS[training.kind(recipe.settings)]
        used = {seeds.held_out, *(seeds.train + seed for seed in recipe.seeds)}
        used_by_grader = {grader.held_out, *(grader.train + seed for seed in recipe.seeds)}
        assert not used & used_by_grader, f"{recipe.describe}: seeds {used & used_by_grader} are the grader's"
        assert seeds.held_out not in {seeds.train + seed for seed in recipe.seeds}, "it would test on training rows"


def reference_student(released: Path, folder: Path) -> Path:
    """The released repository with the reference's modules as the student's."""
    shutil.copytree(released, folder, ignore=shutil.ignore_patterns(".git"))
    for path in SOLUTIONS.glob("*.py"):
        shutil.copyfile(path, folder / "exercises" / path.name)
    return folder


def check_training(folder: Path, *arguments: str) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    command = [sys.executable, "-m", "exercises.check_training", *arguments]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=600)


PADDED = "SequenceClassifier: learns padded rows"  # the quickest classifier item: the reference stops at epoch 3


def test_its_training_check_stops_as_the_grader_does_and_reaches_the_verdict_of_full_length(released, tmp_path):
    student = reference_student(released, tmp_path / "student")
    recipe = rubric.load().recipe("SequenceClassifier", "learns_padded_rows")
    level = recipe.threshold + recipe.settings["stop_margin"]
    stopped = check_training(student, "--only", PADDED)
    full = check_training(student, "--only", PADDED, "--full-length")
    assert stopped.returncode == full.returncode == 0, stopped.stdout + stopped.stderr + full.stderr
    assert stopped.stdout.startswith(f"{PADDED}: reaches the threshold\n{recipe.describe}:\n  median accuracy ")
    assert full.stdout.startswith(f"{PADDED}: reaches the threshold\n{recipe.describe}:\n  median accuracy ")
    stops = re.findall(r"Seed (\d) stopped at epoch (\d) of (\d): (\S+) ≥ (\S+) ", stopped.stdout)
    assert [seed for seed, *_ in stops] == ["0", "1"] and "Seed 2 was not needed" in stopped.stdout
    for _, epoch, last, accuracy, shown in stops:
        assert int(epoch) < int(last) == recipe.settings["epochs"]
        assert float(accuracy) >= float(shown) == round(level, 2)
    assert "stopped at epoch" not in full.stdout and "not needed" not in full.stdout  # every seed, every epoch


def test_its_training_check_trains_one_seed_at_a_time_with_one_job_to_the_same_figures(released, tmp_path):
    student = reference_student(released, tmp_path / "student")
    together = check_training(student, "--only", PADDED)
    alone = check_training(student, "--only", PADDED, "--jobs", "1")
    assert together.returncode == alone.returncode == 0, together.stderr + alone.stderr
    assert together.stdout == alone.stdout  # each training one thread, its own process or not: it repeats exactly


# -- the lock the workflow installs: the grader's pins and hashes, cut down to the student's dependencies ---------
def lock_entries(text: str) -> dict[str, str]:
    """Each package of a lock: its name -> its lines (pin, hashes, `# via`)."""
    return {name: block for name, (block, _) in student_repository._lock_blocks(text).items()}


def test_it_ships_a_lock_with_the_graders_pins_and_hashes_for_every_package_the_student_needs(released):
    shipped = lock_entries((released / student_repository.STUDENT_LOCK).read_text())
    grader = lock_entries(LOCK.read_text())
    assert shipped.items() <= grader.items()  # byte for byte the grader's lines
    assert shipped["torch"].startswith("torch==2.13.0+cpu \\\n    --hash=sha256:")
    student = tomllib.loads((released / "pyproject.toml").read_text())["project"]["dependencies"]
    assert {re.split(r"[=<>]", spec)[0] for spec in student} <= set(shipped)
    assert {"scipy", "joblib", "iniconfig", "sympy"} <= set(shipped)  # what they pull in, by the lock's `# via`
    assert all("--hash=sha256:" in block for block in shipped.values())


def test_its_lock_leaves_out_what_no_student_dependency_pulls_in(monkeypatch, tmp_path):
    grader = tmp_path / "requirements.lock"
    extra = f"matplotlib==3.9.0 \\\n    --hash=sha256:{'0' * 64}\n    # via week07-recurrent-networks\n"
    grader.write_text(LOCK.read_text() + extra)
    monkeypatch.setattr(student_repository, "LOCK", grader)
    shipped = lock_entries(student_repository.student_lock().decode())
    assert "matplotlib" not in shipped and "torch" in shipped


# -- the mistakes' values: numbers from the public tests' inputs only --------------------------------
RECORDED = {"inputs", "returned", "raised", "changed", "autograd", "mutated"}  # what the conftest records of a call


def test_its_mistake_values_name_public_tests_variants_and_the_catalogues_words_only(released):
    shipped = json.loads((released / student_repository.MISTAKES).read_text())
    assert set(shipped) == {"mistakes", "tests", "errors"}
    assert shipped["errors"] == errors.shipped()  # PyTorch's messages explained: the grader's table, as it is
    tests = set(todo_map(stubs.todos()))
    for test, entry in shipped["tests"].items():
        assert test.split("[")[0] in tests, f"{test} is not a public test"
        assert set(entry) == {"function", "in_place", "inputs", "mistakes"}, f"{test}: {sorted(entry)}"
        table = variants.BY_FUNCTION[entry["function"].split(".", 1)[1]]
        unknown = [key for key in entry["mistakes"] if not table.knows(key)]  # a mistake or a pair of them
        assert unknown == [], f"{test}: {unknown}"
        for calls in entry["mistakes"].values():
            assert all(set(call) <= RECORDED for call in calls)
            assert all(0 <= call["inputs"] < len(entry["inputs"]) for call in calls)  # each input stored once
        assert len({json.dumps(inputs) for inputs in entry["inputs"]}) == len(entry["inputs"])
    assert shipped["mistakes"] == {key: catalogue.feedback(key) for key in shipped["mistakes"]}
    assert all("+" not in key for key in shipped["mistakes"])  # a combination's feedback is its parts'
    named = {part for entry in shipped["tests"].values() for key in entry["mistakes"] for part in key.split("+")}
    assert named == set(shipped["mistakes"])


def test_its_mistake_values_name_every_mistake_the_public_tests_see(released):
    """Each catalogue mistake whose variant alone fails a public test is named by a public test's failure."""
    values = public_mistakes.values()  # what the release above shipped, computed once per run
    assert set(values.visible) == set(catalogue.CATALOGUE), sorted(set(catalogue.CATALOGUE) - set(values.visible))
    unnamed = {mistake: sorted(tests)[:3] for mistake, tests in values.visible.items() if mistake not in values.named}
    assert unnamed == {}, f"the public tests fail with these mistakes but never name them: {unnamed}"


def test_its_mistake_values_name_both_mistakes_of_a_pair_made_in_one_function(released):
    shipped = json.loads((released / student_repository.MISTAKES).read_text())
    pair = "K3+S5:step"  # gradients never zeroed, and softmax before the loss, in train_step
    conftest = public_mistakes.public_conftest()
    conftest.known.cache_clear()
    conftest.MISTAKES = released / student_repository.MISTAKES  # the released file, read as a push reads it
    assert conftest.feedback(pair) == catalogue.feedback(pair)
    assert "[K3]" in conftest.feedback(pair) and "[S5]" in conftest.feedback(pair)
    assert any(pair in entry["mistakes"] for entry in shipped["tests"].values())


def random_tensors(fingerprint) -> list[tuple]:
    """The (shape, sum, |sum|) of every tensor in a fingerprint that holds random values (not 0, 1, lengths...)."""
    if isinstance(fingerprint, list) and len(fingerprint) == 3 and isinstance(fingerprint[0], list):
        shape, total, absolute = fingerprint
        if isinstance(absolute, float) and not absolute.is_integer() and math.prod(shape) >= 4:
            return [(tuple(shape), f"{total:.4g}", f"{absolute:.4g}")]
    if isinstance(fingerprint, list):
        return [found for item in fingerprint for found in random_tensors(item)]
    return []


class Spy(InProcess):
    """The reference, in process, remembering the fingerprint of every argument it is called with."""

    def __init__(self, summary) -> None:
        super().__init__(in_package("solutions"))
        self.summary, self.seen = summary, []

    def run(self, target, *args, **kwargs):
        self.seen.extend(random_tensors(self.summary([list(args), sorted(kwargs.items())])))
        return super().run(target, *args, **kwargs)


def test_its_mistake_values_share_no_input_with_the_hidden_checks(released):
    conftest = public_mistakes.public_conftest()
    spy, graded = Spy(conftest.summary), rubric.load()
    for item in graded.items:
        if graded.recipe(item.function, item.aspect) is None:  # the training runs: see above
            todos.check(item.function, item.aspect)(spy)
    hidden = set(spy.seen)
    shipped = json.loads((released / student_repository.MISTAKES).read_text())
    public = {
        found for entry in shipped["tests"].values() for inputs in entry["inputs"] for found in random_tensors(inputs)
    }
    assert len(hidden) > 50 and len(public) > 50, (len(hidden), len(public))  # both sides have inputs to compare
    assert not hidden & public, f"the shipped values hold {len(hidden & public)} inputs of the hidden checks"


def test_it_ships_a_pyproject_with_torch_pinned_and_pytest_importing_the_local_package(released):
    student = tomllib.loads((released / "pyproject.toml").read_text())
    instructor = tomllib.loads((ROOT / "pyproject.toml").read_text())
    torch_pin = next(d for d in instructor["project"]["dependencies"] if d.startswith("torch"))
    assert torch_pin == "torch==2.13.0"
    assert torch_pin in student["project"]["dependencies"]
    assert {re.split(r"[=<>]", d)[0] for d in student["project"]["dependencies"]} == {
        "torch",
        "numpy",
        "scikit-learn",
        "pytest",
    }
    pytest_options = student["tool"]["pytest"]["ini_options"]
    assert pytest_options["pythonpath"] == ["."]
    assert pytest_options["testpaths"] == ["exercises/tests"]
    assert "scripts" not in student["project"]


def test_its_readme_lists_every_todo_with_its_function_lesson_and_points(released):
    text = (released / "README.md").read_text()
    graded = rubric.load()
    for todo in stubs.todos():
        points = sum(item.points for item in graded.items if item.function == todo.function.split(".")[0])
        row = next(line for line in text.splitlines() if line.startswith(f"| {todo.number} · {todo.name} |"))
        assert f"`{todo.module}.{todo.function}`" in row and f"| {points:g} |" in row
        assert "Day " in row, f"{todo.label}: no lesson in {row!r}"
    for item in graded.items:
        assert f"| {item.name} | {item.points:g} |" in text
    assert f"**{graded.total:g}**" in text
    for recipe in graded.recipes:
        assert recipe.describe in text and f"≥ {recipe.threshold:g}" in text
    assert "    python -m exercises.check_training" in text


def test_its_readme_shows_the_line_a_test_fails_with_while_a_todo_is_not_written_where_its_stub_raises(released):
    first = stubs.todos()[0]
    text = (released / "README.md").read_text()
    where = r"\(exercises/(\w+)\.py, line (\d+), in (\w+)\)"
    shown = re.search(rf"`{re.escape(first.label)}: not implemented yet {where}`", text)
    assert shown, f"no example of a stub's failure for {first.label} in the README"
    module, line, function = shown.groups()
    assert (module, function) == (first.module, first.function.split(".")[-1])
    stub = (released / "exercises" / f"{module}.py").read_text().splitlines()[int(line) - 1]
    assert f'raise NotImplementedError("{first.label}: not implemented yet")' in stub


def test_its_readme_sets_up_in_two_commands_and_says_the_preview_is_not_the_grade(released):
    text = (released / "README.md").read_text()
    set_up = text.split("## Set up", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^\s+(python -m pip install .+)$", set_up, flags=re.MULTILINE)
    assert commands == [
        "python -m pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu",
        "python -m pip install -e .",
    ]
    assert "python -m pytest" in text
    assert "under your control: it is feedback to help you, not your\ngrade" in text


def test_its_summary_script_knows_which_todo_every_public_test_belongs_to(released):
    mapping = json.loads((released / ".github/scripts/todos.json").read_text())
    assert [todo["number"] for todo in mapping["todos"]] == [todo.number for todo in stubs.todos()]
    assert set(mapping["tests"].values()) == {todo.number for todo in stubs.todos()}
    for path in PUBLIC_TESTS.glob("test_*.py"):
        names = re.findall(r"^def (test_\w+)", path.read_text(), flags=re.MULTILINE)
        assert {f"{path.stem}::{name}" for name in names} <= set(mapping["tests"])


G3 = "[G3] Your mean divides by the padded length.&#10;  Reread: Day 4.&#10;Tensor-likes are not close!"


def junit(cases: list[str]) -> str:
    return f'<?xml version="1.0"?><testsuites><testsuite name="pytest">{"".join(cases)}</testsuite></testsuites>'


def case(module: str, name: str, failure: str | None = None) -> str:
    body = f'<failure message="{failure}">trace</failure>' if failure else ""
    return f'<testcase classname="exercises.tests.{module}" name="{name}" time="0.5">{body}</testcase>'


def summarize(released: Path, tmp_path: Path, report: str | None) -> tuple[int, str, dict]:
    junit_path = tmp_path / "public-tests.xml"
    if report is not None:
        junit_path.write_text(report)
    summary, output = tmp_path / "summary.md", tmp_path / "output"
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output)}
    script = released / ".github/scripts/summarize.py"
    done = subprocess.run([sys.executable, str(script), str(junit_path)], env=env, capture_output=True, text=True)
    result = output.read_text().strip().removeprefix("result=")
    return done.returncode, summary.read_text(), json.loads(base64.b64decode(result))


def test_its_summary_script_tables_the_public_tests_per_todo_for_the_job_summary_and_classroom(released, tmp_path):
    report = junit(
        [
            case("test_padding", "test_gather_final_with_full_lengths_is_the_last_step"),
            case("test_padding", "test_gather_final_with_length_one_is_the_first_step", "AssertionError: off by one"),
            case("test_baseline", "test_bag_of_counts_returns_an_n_by_9_float_array"),
            case("test_baseline", "test_bag_of_counts_ignores_the_padding_zero"),
            case("test_mine", "test_my_own_idea", "AssertionError: mine"),
            '<testcase classname="" name="exercises.tests.test_recurrence" time="0">'
            '<error message="collection failure">SyntaxError</error></testcase>',
            case("test_padding", "test_masked_mean_returns_batch_by_hidden_of_the_same_dtype", "AssertionError: dtype"),
            case("test_padding", "test_masked_mean_ignores_garbage_after_the_lengths", f"AssertionError: {G3}"),
        ]
    )
    code, summary, result = summarize(released, tmp_path, report)
    assert code == 0
    todos = stubs.todos()
    n = {todo.function: todo.number for todo in todos}  # as the generator numbers them
    assert summary.startswith(f"## Public tests: 1 of {len(todos)} TODOs passing")
    gather, bag = f"{n['gather_final']} · gather-at-final-index", f"{n['bag_of_counts']} · bag of counts"
    assert f"| {gather} | `padding.gather_final` | 1 | 1 | ❌ test_gather_final_with_length" in summary
    assert f"| {bag} | `baseline.bag_of_counts` | 2 | 0 | ✅" in summary
    loop = f"{n['rnn_forward']} · recurrence loop"
    assert f"| {loop} | `recurrence.rnn_forward` | 0 | 1 | ❌ exercises.tests.test_recurrence" in summary
    assert "test_mine::test_my_own_idea: mine" in summary
    named = G3.split("&#10;")[0]  # a failure that names a mistake leads its TODO's row, before an earlier one
    assert f"| {n['masked_mean']} · masked mean | `padding.masked_mean` | 0 | 2 | ❌ {named} |" in summary
    assert result["version"] == 1 and result["status"] == "fail" and result["max_score"] == len(todos)
    by_name = {test["name"]: test for test in result["tests"]}
    assert by_name[f"TODO {bag} (baseline.bag_of_counts)"]["score"] == 1
    assert by_name[f"TODO {gather} (padding.gather_final)"]["status"] == "fail"
    assert sum(test["score"] for test in result["tests"]) == 1
    mean = by_name[f"TODO {n['masked_mean']} · masked mean (padding.masked_mean)"]
    assert mean["message"] == named and mean["test_code"].endswith(f"\n{named}")


def test_its_summary_script_reports_an_error_when_pytest_wrote_no_report(released, tmp_path):
    code, summary, result = summarize(released, tmp_path, None)
    assert code == 0 and result["status"] == "error"
    assert "No readable test report" in summary


@pytest.mark.release  # each release records the mistakes' values
def test_it_refuses_a_folder_with_files_unless_forced_and_keeps_git(tmp_path, capsys):
    target = tmp_path / "student"
    (target / ".git").mkdir(parents=True)
    (target / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert cli.main(["release", str(target)]) == 0  # only .git: nothing to lose
    (target / "stale.txt").write_text("old")
    assert cli.main(["release", str(target)]) == 2
    assert "pass --force" in capsys.readouterr().err
    assert cli.main(["release", str(target), "--force"]) == 0
    assert not (target / "stale.txt").exists() and (target / ".git" / "HEAD").exists()
    assert (target / "exercises" / "recurrence.py").read_bytes() == (EXERCISES / "recurrence.py").read_bytes()


# ------------------------------------------------------------------ a student's first day, end to end


def clean_environment(venv_bin: Path) -> dict[str, str]:
    drop = ("PYTHONPATH", "PYTHONHOME", "PYTHONSAFEPATH", "VIRTUAL_ENV", "PYTEST_ADDOPTS")
    env = {key: value for key, value in os.environ.items() if key not in drop and not key.startswith("PYTEST_")}
    env["PATH"] = f"{venv_bin}{os.pathsep}{env.get('PATH', '')}"
    return env


def run(command: list[str], cwd: Path, env: dict[str, str], timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def junit_cases(path: Path) -> dict[str, tuple[str, str]]:
    """'test_module::test_name' -> (outcome, message) for every test case of a junit report."""
    cases = {}
    for element in ET.parse(path).getroot().iter("testcase"):
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            child = element.find(tag)
            if child is not None:
                outcome, message = tag, child.get("message", "")
        module = element.get("classname", "").rsplit(".", 1)[-1]
        cases[f"{module}::{element.get('name', '').split('[')[0]}"] = (outcome, message)
    return cases


@pytest.mark.deployed  # a fresh venv, as the README's commands make it
def test_a_student_installs_the_release_in_a_fresh_venv_and_its_public_tests_fail_then_pass(tmp_path):
    repository = tmp_path / "student"
    written = student_repository.release(repository)
    env = {**os.environ, "GIT_AUTHOR_NAME": "s", "GIT_AUTHOR_EMAIL": "s@example.org"}
    assert run(["git", "init", "--quiet", str(repository)], tmp_path, env).returncode == 0

    # A fully fresh venv, set up as the README's two commands do, but for one difference: torch==2.13.0 comes
    # from this machine's own package index, without the first command's --index-url of PyTorch's CPU wheels
    # (a site this machine cannot reach; here 2.13.0 is the CPU wheel already). The second command is verbatim.
    try:
        student_day(tmp_path, repository, written)
    finally:
        shutil.rmtree(tmp_path / "venv", ignore_errors=True)  # 1 GB that pytest would otherwise keep


def student_day(tmp_path: Path, repository: Path, written: list[str]) -> None:
    venv.create(tmp_path / "venv", with_pip=True)
    python = tmp_path / "venv" / "bin" / "python"
    env = clean_environment(python.parent)
    for command in (["torch==2.13.0"], ["-e", "."]):
        done = run([str(python), "-m", "pip", "install", "--quiet", *command], repository, env)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    where = run(
        [str(python), "-c", "import exercises, torch; print(exercises.__file__); print(torch.__file__)"], tmp_path, env
    )
    exercises_file, torch_file = where.stdout.split()
    assert Path(exercises_file).resolve() == (repository / "exercises" / "__init__.py").resolve()
    assert Path(torch_file).resolve().is_relative_to((tmp_path / "venv").resolve())

    # on the stubs every public test fails, naming the TODO its section belongs to
    mapping = json.loads((repository / ".github/scripts/todos.json").read_text())
    done = run([str(python), "-m", "pytest", "-q", "--junitxml=public-tests.xml"], repository, env)
    assert done.returncode == 1, done.stdout[-3000:]
    cases = junit_cases(repository / "public-tests.xml")
    assert set(cases) == set(mapping["tests"])
    for key, (outcome, message) in cases.items():
        assert outcome == "failure", f"{key}: {outcome}"
        assert TODO_LABEL.search(message) and int(TODO_LABEL.search(message)[1]) == mapping["tests"][key], (
            f"{key} belongs to TODO {mapping['tests'][key]} but failed with {message!r}"
        )
    todos = len(stubs.todos())
    summary_env = {**env, "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "GITHUB_OUTPUT": str(tmp_path / "out")}
    done = run([str(python), ".github/scripts/summarize.py", "public-tests.xml"], repository, summary_env)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "summary.md").read_text().startswith(f"## Public tests: 0 of {todos} TODOs passing")

    # with the reference copied into exercises/ every public test passes
    for path in SOLUTIONS.glob("*.py"):
        shutil.copyfile(path, repository / "exercises" / path.name)
    done = run([str(python), "-m", "pytest", "-q", "--junitxml=public-tests.xml"], repository, env)
    assert done.returncode == 0, done.stdout[-3000:]
    assert all(outcome == "passed" for outcome, _ in junit_cases(repository / "public-tests.xml").values())
    (tmp_path / "summary.md").unlink()
    done = run([str(python), ".github/scripts/summarize.py", "public-tests.xml"], repository, summary_env)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "summary.md").read_text().startswith(f"## Public tests: {todos} of {todos} TODOs passing")

    # a mistake of the catalogue: the failure names it, and so does the summary's row for its TODO
    shutil.copyfile(SOLUTIONS / "padding.py", repository / "exercises" / "padding.py")
    with (repository / "exercises" / "padding.py").open("a") as module:
        module.write("\n\ndef gather_final(output, lengths):\n    return output[:, -1]\n")
    done = run([str(python), "-m", "pytest", "-q", "--junitxml=public-tests.xml"], repository, env)
    assert done.returncode == 1, done.stdout[-3000:]
    failed = {
        key: message
        for key, (outcome, message) in junit_cases(repository / "public-tests.xml").items()
        if outcome != "passed"
    }
    assert failed and all(
        message.startswith("AssertionError: [G1] Your final states equal output[:, -1]") for message in failed.values()
    ), failed
    done = run([str(python), ".github/scripts/summarize.py", "public-tests.xml"], repository, summary_env)
    number = next(todo.number for todo in stubs.todos() if todo.function == "gather_final")
    row = re.compile(
        rf"\| {number} · gather-at-final-index \| `padding.gather_final` \| \d+ \| [1-9]\d* \| ❌ \[G1\] Your final"
    )
    assert row.search((tmp_path / "summary.md").read_text())  # some of its tests pass, the others name G1
    shutil.copyfile(SOLUTIONS / "padding.py", repository / "exercises" / "padding.py")

    # the training check: the grader's recipe and words, over the student's code
    item = "next_token_loss: trains the pattern model"
    done = run([str(python), "-m", "exercises.check_training", "--only", item, "--seeds", "1"], repository, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(
        f"{item}: reaches the threshold\nAn LSTM language model trained with your next_token_loss"
    )
    recipe = rubric.load().recipe("next_token_loss", "trains_the_pattern_model")
    assert (
        f"; it needs {recipe.threshold:.2f}.\n  The lesson's model reached {recipe.settings['lesson']}." in done.stdout
    )

    # what the install and the test runs left behind is git-ignored: git sees the released files only
    assert run(["git", "add", "--all"], repository, env).returncode == 0
    tracked = run(["git", "ls-files"], repository, env).stdout.split()
    assert sorted(tracked) == sorted(written)


def test_the_journey_pages_walk_each_journey_with_the_commands_that_exist(released):
    docs = ROOT / "docs"
    student_set_up = re.findall(r"^\s+(python -m pip install .+)$", (released / "README.md").read_text(), re.MULTILINE)
    for page, commands in {
        "student.md": student_set_up,  # the released README's own set-up, verbatim
        "instructor.md": ["autograde release "],
        "grader.md": [
            "autograde grade ",
            "autograde grade-all ",
            "autograde gradebook ",
            "gh workflow run grade-roster.yml",
        ],
        "after-the-deadline.md": ["autograde report "],
        "gradescope.md": ["autograde gradescope "],
    }.items():
        text = (docs / page).read_text()
        for command in commands:
            assert command in text, f"{page}: {command}"
    subcommands = set(cli.build_parser()._subparsers._group_actions[0].choices)
    assert {"release", "grade", "grade-all", "gradebook", "report", "gradescope"} <= subcommands


def nothing_recorded(module: str, *_: object) -> None:
    raise AssertionError(f"{module} was recorded again: nothing of it changed")


@pytest.mark.release  # three releases, two of which record every public test module
def test_a_release_is_the_same_byte_for_byte_cold_warm_and_without_the_cache(tmp_path, monkeypatch):
    """The cache changes when the known mistakes are recorded, never what ships: a first release (the cache empty,
    the modules recorded side by side), a second one (nothing recorded) and one without the cache (the modules
    recorded one at a time) write the same files."""
    cache = tmp_path / "cache"

    def release(name: str, folder: Path | None) -> dict[str, bytes]:
        monkeypatch.setattr(public_mistakes, "values", lambda: public_mistakes.computed(folder))
        student_repository.release(tmp_path / name)
        return every_file(tmp_path / name)

    cold = release("cold", cache)
    with monkeypatch.context() as warm_only:
        warm_only.setattr(public_mistakes, "_start", nothing_recorded)
        warm = release("warm", cache)
    monkeypatch.setattr(recordings, "cores", lambda: 1)
    off = release("off", None)
    assert cold.keys() == warm.keys() == off.keys() and student_repository.MISTAKES in cold
    assert [name for name in cold if not cold[name] == warm[name] == off[name]] == []
    assert len(list(cache.glob("*.rec"))) == len(list(PUBLIC_TESTS.glob("test_*.py")))


def test_release_no_cache_records_every_public_test_module_again(tmp_path, monkeypatch):
    monkeypatch.setenv(RECORDINGS_VARIABLE, str(tmp_path / "cache"))
    caches = []
    monkeypatch.setattr(
        public_mistakes,
        "values",
        lambda: caches.append(public_mistakes.cache_folder()) or public_mistakes.Values({}, {}, {}),
    )
    assert cli.main(["release", str(tmp_path / "cached")]) == 0
    assert cli.main(["release", str(tmp_path / "recorded again"), "--no-cache"]) == 0
    assert caches == [tmp_path / "cache", None]

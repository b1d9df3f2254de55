"""Grading a whole submission: full marks, zero, and misbehaving code that costs only its own items."""

import json
import os
import subprocess
import sys
import tempfile

import pytest
from support import EXERCISES, ROOT, SOLUTIONS, appended_to, build_submission, grade, replace_in, rubric_file

from autograder import cli, rubric, stubs, todos
from autograder.grading import writers
from autograder.grading.grade import (
    INDUCTOR_CACHE,
    REAL_DYNAMO,
    GradingError,
    caches_in,
    copy_submission,
    limits_from,
)
from autograder.sandbox.worker import COLD_WORKER

pytestmark = pytest.mark.gradings  # every test here grades submissions through the worker


def scores(result) -> dict[str, float]:
    return {item.name: item.score for item in result.items}


def by_function(result, function: str) -> list:
    return [item for item in result.items if item.function == function]


def test_it_gives_the_reference_full_marks(reference_result):
    failed = {item.name: item.feedback for item in reference_result.items if item.status != "passed"}
    assert failed == {}
    assert reference_result.score == reference_result.max_score == rubric.load().total


def test_it_gives_the_stubs_zero_and_names_each_todo(stub_result):
    labels = {todo.function.split(".")[0]: todo.label for todo in stubs.todos()}
    assert stub_result.score == 0
    for item in stub_result.items:
        assert item.status == "failed"
        assert item.feedback.startswith(f"{labels[item.function]} is not done yet"), item.feedback


def test_it_costs_a_module_that_does_not_import_only_its_own_items(submission):
    broken = replace_in("recurrence", "    h, c = state\n", "    h, c = state\n  oops(\n")
    result = grade(submission({"recurrence": broken}), only=["rnn_forward", "lstm_step", "gather_final"])
    for item in by_function(result, "rnn_forward") + by_function(result, "lstm_step"):
        assert item.score == 0
        assert "exercises/recurrence.py could not be imported: IndentationError" in item.feedback
        assert item.failure == "import failed"
    assert all(item.status == "passed" for item in by_function(result, "gather_final"))


def test_it_scores_a_hanging_function_zero_and_goes_on(submission):
    hanging = replace_in(
        "padding", "    index = (lengths - 1)", "    while True:\n        pass\n    index = (lengths - 1)"
    )
    result = grade(submission({"padding": hanging}), only=["gather_final", "masked_mean"], call_timeout=2.0)
    for gather in by_function(result, "gather_final"):  # its values and its legal inputs
        assert gather.score == 0 and "did not finish (timeout)" in gather.feedback
        assert "no answer within 2 s" in gather.feedback  # the call's own bound, not the start-up allowance
        assert gather.failure == "timeout"
    assert all(item.status == "passed" for item in by_function(result, "masked_mean"))


def test_it_scores_a_function_that_exits_the_process_zero_and_goes_on(submission):
    exiting = replace_in(
        "padding", "    index = (lengths - 1)", "    import os\n    os._exit(0)\n    index = (lengths - 1)"
    )
    result = grade(submission({"padding": exiting}), only=["gather_final", "masked_mean"])
    for gather in by_function(result, "gather_final"):  # its values and its legal inputs
        assert gather.score == 0 and "did not finish (exit)" in gather.feedback
        assert gather.failure == "exit"
    assert all(item.status == "passed" for item in by_function(result, "masked_mean"))


def test_it_scores_a_keyboard_interrupt_zero_and_goes_on(submission):
    interrupting = replace_in(
        "padding",
        "    steps = torch.arange(output.shape[1]",
        "    raise KeyboardInterrupt\n    steps = torch.arange(output.shape[1]",
    )
    result = grade(submission({"padding": interrupting}), only=["gather_final", "masked_mean"])
    for mean in by_function(result, "masked_mean"):  # its values and its legal inputs
        assert mean.score == 0 and mean.feedback.startswith("masked_mean raised KeyboardInterrupt")
        assert mean.failure == "raised"
    assert all(item.status == "passed" for item in by_function(result, "gather_final"))


FORCE_PASS = """
import pytest

@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    report.outcome = "passed"
    return report
"""


def test_it_ignores_a_conftest_and_ini_that_force_every_test_to_pass(submission, tmp_path):
    folder = submission(base=EXERCISES)
    for place in (folder, folder / "exercises", folder / "exercises" / "tests"):
        place.mkdir(exist_ok=True)
        (place / "conftest.py").write_text(FORCE_PASS)
    (folder / "pytest.ini").write_text("[pytest]\naddopts = -p no:python\n")
    result = grade(folder, only=["gather_final", "masked_mean"])
    assert result.score == 0
    ignored = {entry.path for entry in result.ignored}
    assert {"conftest.py", "exercises/conftest.py", "pytest.ini"} <= ignored
    assert "exercises/tests/conftest.py" not in ignored and result.unlisted.shipped >= 1, "the release's own: counted"


def test_it_runs_the_hidden_suites_with_none_of_the_graders_own_pytest_options(submission, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTEST_ADDOPTS", f"--junitxml={tmp_path}/not-a-folder/x.xml -p no:python")
    monkeypatch.setenv("PYTEST_PLUGINS", "a_plugin_that_is_not_installed")
    result = grade(submission(), only=["gather_final"])
    assert result.score == result.max_score > 0
    assert (os.environ["PYTEST_ADDOPTS"], os.environ["PYTEST_PLUGINS"]) == (
        f"--junitxml={tmp_path}/not-a-folder/x.xml -p no:python",
        "a_plugin_that_is_not_installed",
    )  # the grader's own environment, as it was


def test_it_grades_the_same_submission_identically_twice(submission, tmp_path):
    buggy = replace_in("padding", "return total / lengths.unsqueeze(1).to(output)", "return total / output.shape[1]")
    folder = submission({"padding": buggy})
    documents = []
    for _ in range(2):
        result = grade(folder, only=["gather_final", "masked_mean", "sample"])
        document = writers.gradescope(result)
        document.pop("execution_time")
        documents.append(json.dumps(document, sort_keys=True))
    assert documents[0] == documents[1]
    assert '"[G3]' in documents[0] or "[G3]" in documents[0]


# `autograde grade` in a fresh process, with an audit hook noting whether the grader had imported torch
# at each start of a process that imports it for the worker (a worker, a warm parent or a zygote: their boot code
# imports from the runtime package) and at the end
WORKER_STARTS_AND_TORCH = """
import json, sys
starts = []
def note(event, arguments):
    if event == "subprocess.Popen" and "from autograde_runtime import " in " ".join(map(str, arguments[1])):
        starts.append("torch" in sys.modules)
sys.addaudithook(note)
from autograder import cli
code = cli.main(["grade", "--reference", "--only", "gather_final", "--out", sys.argv[1]])
print(json.dumps({"code": code, "torch_at_worker_starts": starts, "torch_at_the_end": "torch" in sys.modules}))
"""


def test_it_starts_the_worker_before_the_grader_pays_for_importing_torch(tmp_path):
    command = [sys.executable, "-c", WORKER_STARTS_AND_TORCH, str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["code"] == 0 and seen["torch_at_the_end"], seen
    assert seen["torch_at_worker_starts"][:1] == [False], "the grader imported torch before it started the worker"


def test_it_preloads_only_what_the_selected_items_need():
    everything = limits_from(rubric.load()).preload
    assert set(everything) == {name for record in todos.records() for name in record.preload} != set()
    assert limits_from(rubric.load().select(["gather_final"])).preload == ()
    assert limits_from(rubric.load().select(["fit_baseline"])).preload == ("sklearn.linear_model",)


def test_it_preloads_the_real_compiler_for_the_items_that_train_only_when_asked(monkeypatch):
    monkeypatch.delenv(REAL_DYNAMO, raising=False)
    assert "torch._dynamo" not in limits_from(rubric.load()).preload  # the stand-in serves every step
    monkeypatch.setenv(REAL_DYNAMO, "1")
    assert limits_from(rubric.load().select(["train_step"])).preload == ("torch._dynamo",)
    assert limits_from(rubric.load().select(["gather_final"])).preload == ()
    assert limits_from(rubric.load().select(["next_token_loss"])).preload == ("torch._dynamo",)


def test_it_refuses_an_exercises_folder_that_is_a_link_to_elsewhere(tmp_path):
    """A fork can hold `exercises -> ../grader/solutions`: git checks links out, and the grader can read there."""
    (tmp_path / "fork").mkdir()
    (tmp_path / "fork" / "exercises").symlink_to(SOLUTIONS)
    with pytest.raises(GradingError, match="exercises is a symbolic link: grading reads only the submission's own"):
        copy_submission(tmp_path / "fork", tmp_path / "copy")
    assert not (tmp_path / "copy").exists()


# The catalogue's R1 as a student writes it: the rest of the reference module, this rnn_forward.
R1_MISTAKE = ROOT / "tests" / "corpus" / "mistakes" / "R1_both_untransposed.py"


@pytest.fixture(scope="module")
def r1_gradings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """A submission whose only mistake is R1, graded by `autograde grade --only rnn_forward` with the grader's
    own rubric and with a course section's, whose [credit] keeps part of an item for R1."""
    root = tmp_path_factory.mktemp("r1")
    edits = {"recurrence": appended_to("recurrence", R1_MISTAKE.read_text())}
    folder = build_submission(root / "submission", edits=edits)
    section = rubric_file(root / "section.toml", "[credit]\nR1 = 0.5\nG1 = 0.25\n")
    found = {}
    for name, options in (("own", []), ("section", ["--rubric", str(section)])):
        out = root / name
        assert cli.main(["grade", str(folder), "--out", str(out), "--only", "rnn_forward", *options]) == 0
        found[name] = {
            "results": json.loads((out / "results.json").read_text()),
            "summary": (out / "summary.md").read_text(),
        }
    found["rubric"] = rubric.load(section).select(["rnn_forward"])
    return found


def test_without_credit_every_item_naming_r1_scores_zero_as_before(r1_gradings):
    tests = r1_gradings["own"]["results"]["tests"]
    named = [test for test in tests if test["tags"] == ["R1"]]
    assert named and all(test["score"] == 0 and test["output"].startswith("[R1] ") for test in named)
    assert all("credit" not in test["extra_data"] and "kept by" not in test["output"] for test in tests)
    passed = sum(test["score"] for test in tests)
    assert r1_gradings["own"]["results"]["score"] == passed


def test_with_credit_each_item_naming_r1_keeps_its_share_and_says_so(r1_gradings):
    section = r1_gradings["rubric"]
    fraction = section.credit.fractions["R1"]
    own = {test["name"]: test for test in r1_gradings["own"]["results"]["tests"]}
    credited = r1_gradings["section"]["results"]["tests"]
    named = [test for test in credited if own[test["name"]]["tags"] == ["R1"]]
    assert len(named) == len([test for test in own.values() if test["tags"] == ["R1"]]) > 0
    for test in named:
        kept = test["max_score"] * fraction
        first = test["output"].splitlines()[0]
        assert test["score"] == kept and test["status"] == "failed" and test["tags"] == ["R1"]
        assert first == own[test["name"]]["output"].splitlines()[0] + (
            f" — {kept:g} of {test['max_score']:g} points kept by the course's rubric"
        )
        assert test["extra_data"]["raw_score"] == 0 and test["extra_data"]["failure"] == "wrong"
        assert test["extra_data"]["credit"] == {"mistake": "R1", "fraction": fraction, "points": kept}
        assert f"| {test['name']} | {kept:g} | {test['max_score']:g} | ❌ `[R1] " in r1_gradings["section"]["summary"]
    expected = sum(own[test["name"]]["score"] for test in credited) + sum(test["score"] for test in named)
    assert r1_gradings["section"]["results"]["score"] == expected


NESTING = """    import os
    folder = os.open(".", os.O_RDONLY)  # the worker's scratch folder, inside the grading's own
    for _ in range(0 if os.path.exists("d") else 1100):  # at the first call
        os.mkdir("d", dir_fd=folder)
        inner = os.open("d", os.O_RDONLY, dir_fd=folder)
        os.close(folder)
        folder = inner
"""


def test_it_keeps_the_grade_of_code_that_leaves_a_tree_past_the_recursion_limit_and_removes_it(
    submission, tmp_path, monkeypatch
):
    """TemporaryDirectory's clean-up recursed: 1,100 folders made by the student's code lost the whole grade."""
    nesting = replace_in("padding", "    index = (lengths - 1)", NESTING + "    index = (lengths - 1)")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    result = grade(submission({"padding": nesting}), only=["gather_final"])
    assert [item.status for item in result.items] == ["passed", "passed"], result.error or result.items[0].feedback
    assert list((tmp_path / "tmp").iterdir()) == [], "the grading's folder is gone, the student's tree with it"


def test_it_makes_the_caches_of_its_imports_in_the_gradings_own_folder_then_restores_the_setting(tmp_path, monkeypatch):
    monkeypatch.delenv(INDUCTOR_CACHE, raising=False)
    with caches_in(tmp_path):
        assert os.environ[INDUCTOR_CACHE] == str(tmp_path / "torchinductor")
    assert INDUCTOR_CACHE not in os.environ
    monkeypatch.setenv(INDUCTOR_CACHE, "/elsewhere")  # an instructor's own setting is kept
    with caches_in(tmp_path):
        assert os.environ[INDUCTOR_CACHE] == "/elsewhere"
    assert os.environ[INDUCTOR_CACHE] == "/elsewhere"


def test_it_grades_a_mistake_alike_with_a_warm_parent_and_with_cold_workers(submission, monkeypatch):
    mistake = (ROOT / "tests" / "corpus" / "mistakes" / "C2_last_step_of_padding.py").read_text()
    folder = submission({"classifier": appended_to("classifier", mistake)})
    warm = grade(folder, only=["SequenceClassifier"])  # fresh workers forked from one parent (a threshold item's)
    monkeypatch.setenv(COLD_WORKER, "1")
    cold = grade(folder, only=["SequenceClassifier"])
    verdicts = [
        [(item.name, item.score, item.feedback, item.measured) for item in result.items] for result in (warm, cold)
    ]
    assert verdicts[0] == verdicts[1]
    assert any(item.status == "failed" for item in warm.items), "the mistake should cost an item"

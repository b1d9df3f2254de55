"""Integrity notes: each reach for the grader or the machine found with its line, honest code never noted,
hostile sources bounded, and the notes kept for the instructor alone (integrity.json, never the student's)."""

import json
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
from support import EXERCISES, ROOT, SOLUTIONS, appended_to, build_submission

from autograder import commands, integrity, rubric
from autograder.grading import writers
from autograder.grading.grade import copy_submission
from autograder.grading.results import GradingResult, ItemResult
from autograder.integrity import Kind, Note, Notes
from autograder.roster import grade_all
from autograder.sandbox import layers

ATTACKS = ROOT / "tests" / "attacks" / "submissions"
CORPUS = ROOT / "tests" / "corpus"

# (source, the kind noted, on which line): one reach of each kind, among honest lines
REACHES = {
    "imports the runtime": ("import torch\nfrom autograde_runtime import training\n", Kind.GRADER, 2),
    "imports the reference": ("x = 1\nimport solutions.padding as reference\n", Kind.GRADER, 2),
    "names the grader in a string": ("import sys\nm = sys.modules.get('autograder.checks')\n", Kind.GRADER, 2),
    "walks frames": ("import sys\n\ndef f():\n    return sys._getframe(1).f_locals\n", Kind.FRAMES, 4),
    "walks the stack": ("import inspect\nframes = inspect.stack()\n", Kind.FRAMES, 2),
    "a frame's caller": ("def f(frame):\n    return frame.f_back\n", Kind.FRAMES, 2),
    "a traceback's frame": (
        "try:\n    1 / 0\nexcept Exception as e:\n    t = e.__traceback__.tb_frame\n",
        Kind.FRAMES,
        4,
    ),
    "every object": ("x = 1\nfrom gc import get_objects as everything\n", Kind.FRAMES, 2),
    "referrers": ("import gc\nthings = gc.get_referrers(print)\n", Kind.FRAMES, 2),
    "patches torch": ("import torch\ntorch.allclose = lambda *a, **k: True\n", Kind.PATCH, 2),
    "patches nn": ("from torch import nn\n\nnn.LSTM.forward = print\n", Kind.PATCH, 3),
    "patches a class of torch": ("import torch\ntorch.Tensor.__eq__ = lambda s, o: True\n", Kind.PATCH, 2),
    "patches builtins": ("import builtins\nbuiltins.print = len\n", Kind.PATCH, 2),
    "patches __builtins__": ("__builtins__['open'] = None\n", Kind.PATCH, 1),
    "replaces a module": ("import sys\nsys.modules['exercises.padding'] = None\n", Kind.PATCH, 2),
    "setattr on a module": ("import torch.nn.functional as F\nsetattr(F, 'cross_entropy', max)\n", Kind.PATCH, 2),
    "the import system": ("import sys\n\nsys.meta_path.insert(0, object())\n", Kind.PATCH, 3),
    "unpacked targets": ("import numpy as np\na, np.allclose = 1, 2\n", Kind.PATCH, 2),
    "reads /proc": ("x = 1\nwith open('/proc/self/status') as f:\n    pass\n", Kind.PROC, 2),
    "reads /proc in an f-string": ("import os\npath = f'/proc/{os.getpid()}/cwd'\n", Kind.PROC, 2),
    "forks": ("import os\n\npid = os.fork()\n", Kind.PROCESS, 3),
    "kills": ("import os\n\nos.kill(os.getppid(), 9)\n", Kind.PROCESS, 3),
    "sets a limit": ("import resource\n", Kind.PROCESS, 1),
    "prlimit": ("x = 2\nfrom resource import prlimit\n", Kind.PROCESS, 2),
    "ptrace through ctypes": ("import ctypes.util\n", Kind.PROCESS, 1),
    "a signal": ("import signal as s\n", Kind.PROCESS, 1),
    "a subprocess": ("x = 1\n\nimport subprocess\n", Kind.PROCESS, 3),
    "a pool": ("from multiprocessing import Pool\n", Kind.PROCESS, 1),
    "the network": ("import socket\n", Kind.NETWORK, 1),
    "an absolute path": ("import torch\nw = torch.load('/autograder/source/weights.pt')\n", Kind.FILES, 2),
    "a parent folder": ("from pathlib import Path\np = Path(__file__).parent / '..' / 'grading'\n", Kind.FILES, 2),
    "a home folder": ("x = open('~/.ssh/id_rsa')\n", Kind.FILES, 1),
    "exec": ("code = 'x = 1'\nexec(code)\n", Kind.DYNAMIC, 2),
    "a term times zero": ("def forward(self, x):\n    return rule(x) + 0 * self.head.bias\n", Kind.MODEL, 2),
    "a branch on training": ("def forward(self, x):\n    if self.training:\n        return x\n", Kind.MODEL, 2),
    "a method replaced": ("class Model:\n    pass\n\n\nModel.forward = print\n", Kind.MODEL, 5),
    "a computed import": ("import importlib\nm = importlib.import_module('aut' + 'ograder')\n", Kind.DYNAMIC, 2),
}


def notes_of(source: str, module: str = "padding.py") -> Notes:
    return integrity.analyse({module: textwrap.dedent(source).encode()})


@pytest.mark.parametrize("case", list(REACHES))
def test_it_notes_each_kind_of_reach_with_its_line(case):
    source, kind, line = REACHES[case]
    found = notes_of(source)
    assert [(note.kind, note.line) for note in found.notes if note.kind is kind] == [(kind, line)], found.notes
    noted = next(note for note in found.notes if note.kind is kind)
    assert noted.module == "padding.py"
    assert noted.text == source.splitlines()[line - 1].strip()


# issue 30's threshold attacks, written here: each noted for the instructor (the grade says the rest)
THRESHOLD_ATTACKS = {
    "a rule in forward": (
        """
        import torch


        class SequenceClassifier(torch.nn.Module):
            def forward(self, tokens, lengths=None):
                again = (tokens[:, 1:] == tokens[:, :1]).any(dim=1).float()
                return torch.stack([1 - again, again], dim=1) * 10 + 0 * self.head.bias
        """,
        {Kind.MODEL},
    ),
    "an evaluation switch": (
        """
        import torch


        def _forward(self, tokens, lengths=None):
            if self.training:
                return self.head(torch.zeros(len(tokens), self.head.in_features))
            return rule(tokens)


        class SequenceClassifier(torch.nn.Module):
            pass


        SequenceClassifier.forward = _forward
        """,
        {Kind.MODEL},
    ),
    "a replaced routine": (
        """
        import sys


        def next_token_loss(model, tokens, pad_id=None):
            return model(tokens).mean()


        for name, module in list(sys.modules.items()):
            if name.endswith(".training"):
                setattr(module, "train_pattern_model", vote)
        """,
        {Kind.FRAMES},
    ),
}


@pytest.mark.parametrize("case", list(THRESHOLD_ATTACKS))
def test_it_notes_the_threshold_attacks_of_issue_30(case):
    source, kinds = THRESHOLD_ATTACKS[case]
    assert {note.kind for note in notes_of(source).notes} == kinds


def test_it_notes_a_line_once_per_kind_and_lists_the_notes_in_line_order():
    found = notes_of("import os\nos.kill(os.getppid(), 9)\nimport torch\ntorch.equal = torch.allclose = max\n")
    assert [(note.line, note.kind) for note in found.notes] == [(2, Kind.PROCESS), (4, Kind.PATCH)]


def honest_modules() -> list[Path]:
    """The reference, every correct variant and every known mistake of the corpus, and the stubs."""
    paths = [*SOLUTIONS.glob("*.py"), *EXERCISES.glob("*.py"), *(CORPUS / "correct").glob("*.py")]
    return sorted([*paths, *(CORPUS / "mistakes").glob("*.py")])


@pytest.mark.parametrize("path", honest_modules(), ids=lambda path: f"{path.parent.name}/{path.name}")
def test_it_notes_nothing_in_honest_code(path):
    found = integrity.analyse({path.name: path.read_bytes()})
    assert found == Notes(), "a false positive is a defect"


def test_the_honest_modules_are_all_there():
    assert len(list((CORPUS / "correct").glob("*.py"))) >= 10 and len(list(SOLUTIONS.glob("*.py"))) >= 7


# the attack submissions and what each is noted for, read as grading reads a submission
NOTED_ATTACKS = {
    "background_process": {Kind.PROCESS},
    "orphan_ignores_signals": {Kind.PROCESS},
    "fake_results_json": {Kind.FILES},
    "fork_bomb": {Kind.PROCESS},
    "global_torch_state": {Kind.PATCH},
    "grader_stdout": {Kind.PROC, Kind.PROCESS},
    "ignore_sigterm": {Kind.PROCESS},
    "import_solutions": {Kind.GRADER, Kind.PROC, Kind.FILES, Kind.PROCESS, Kind.DYNAMIC},
    "kill_parent": {Kind.PROCESS},
    "killpg": {Kind.PROCESS},
    "monkeypatch_at_import": {Kind.PATCH},
    "network_at_import": {Kind.NETWORK, Kind.DYNAMIC},
    "os_exit": {Kind.PROCESS},
    "search_expected": {Kind.GRADER, Kind.FRAMES, Kind.PROC, Kind.FILES, Kind.DYNAMIC},
    "read_memo": {Kind.FILES},
    # what outlives a worker, reached through ctypes (the queue's name reads as an absolute path)
    "shared_memory": {Kind.PROCESS},
    "message_queue": {Kind.PROCESS},
    "semaphores": {Kind.PROCESS},
    "posix_message_queue": {Kind.FILES, Kind.PROCESS},
    "kernel_keys": {Kind.PROCESS},
    # answers written by a replaced codec, found through the worker's runtime in the calling frames
    "stride0_gradients": {Kind.FRAMES},
    "oversized_gradients": {Kind.FRAMES},
    "overlapping_strides": {Kind.FRAMES},
    "inflated_storage": {Kind.FRAMES},
    "cpu_hog": {Kind.PROCESS},
    "thread_bomb": {Kind.PATCH, Kind.PROCESS},
    "disk_filler": {Kind.FILES},
    "prlimit_others": {Kind.PROC, Kind.PROCESS},
    "reschedule_others": {Kind.PROC, Kind.PROCESS},
    "starve_supervisor": {Kind.PROC, Kind.PROCESS},
    "huge_error_lines": {Kind.GRADER, Kind.FRAMES},  # it replaces the worker's runtime's reply
    "rule_forward": {Kind.MODEL},
    "evaluation_switch": {Kind.MODEL},
    "replaced_training_routine": {Kind.FRAMES},
}
# the attacks that reach for nothing: wrong answers, floods, hangs, exits and files grading never copies
NOT_NOTED = {
    "conftest_forces_pass",
    "exception_escapes",
    "exception_str_raises",
    "huge_answer",
    "huge_exception_message",
    "huge_string_answer",
    "huge_type_name",
    "infinite_loop",
    "ini_addopts",
    "input_call",
    "memory_bomb",
    "mutate_input",
    "print_escapes",
    "print_fake_score",
    "print_flood",
    "raise_base_exceptions",
    "return_always_equal",
    "return_broadcastable",
    "return_input",
    "return_list",
    "return_nan_inf",
    "return_numpy",
    "return_tensor_subclass",
    "return_wrong_dtype",
    "sitecustomize_and_pth",
    "syntax_error",
    "sys_exit_at_import",
    "torch_shadow",
}


def graded_notes(submission: Path, tmp_path: Path) -> Notes:
    copy_submission(submission, tmp_path / "copy")
    return integrity.analyse_folder(tmp_path / "copy" / "exercises")


@pytest.mark.parametrize("attack", list(NOTED_ATTACKS))
def test_it_notes_the_attack_submissions_for_what_they_reach(attack, tmp_path):
    found = graded_notes(ATTACKS / attack, tmp_path)
    assert {note.kind for note in found.notes} == NOTED_ATTACKS[attack], found.notes


def test_every_attack_submission_is_either_noted_or_known_to_reach_for_nothing():
    attacks = {path.name for path in ATTACKS.iterdir() if path.is_dir()}
    assert attacks == set(NOTED_ATTACKS) | NOT_NOTED and not set(NOTED_ATTACKS) & NOT_NOTED


@pytest.mark.parametrize("attack", sorted(NOT_NOTED))
def test_it_leaves_the_attacks_that_reach_for_nothing_unnoted(attack, tmp_path):
    assert graded_notes(ATTACKS / attack, tmp_path).notes == []


def test_it_reads_only_what_grading_copies(tmp_path):
    (tmp_path / "exercises").mkdir()
    (tmp_path / "exercises" / "padding.py").write_text("x = 1\n")
    (tmp_path / "exercises" / "linked.py").symlink_to(ROOT / "tests" / "attacks" / "submissions")
    (tmp_path / "exercises" / "sitecustomize.py").write_text("import ctypes\n")  # never copied, never runs
    (tmp_path / "conftest.py").write_text("import ctypes\n")
    assert graded_notes(tmp_path, tmp_path / "out") == Notes()


def test_it_reads_a_docstring_as_prose_and_a_comment_not_at_all():
    source = '"""Reads /proc/self and ../grading, sys._getframe."""\n# import ctypes; torch.x = 1\nx = 1\n'
    assert notes_of(source) == Notes()


# hostile sources: none of these runs, and none costs the grading
UNPARSABLE = {
    "a syntax error": b"def f(:\n    import ctypes\n",
    "null bytes": b"import ctypes\x00\n",
    "bytes that are not UTF-8": b"import ctypes\nx = '\xff\xfe'\n",
    "an unknown coding": b"# -*- coding: nonsense -*-\nimport ctypes\n",
    "parentheses past the parser's limit": b"x = " + b"(" * 100_000 + b"1" + b")" * 100_000 + b"\n",
    "unary operators past the parser's stack": b"x = " + b"-" * 200_000 + b"1\n",
    "an attribute chain past Python's stack": b"import torch\nx = torch" + b".a" * 100_000 + b"\n",
}


@pytest.mark.parametrize("case", list(UNPARSABLE))
def test_a_module_python_cannot_parse_has_no_note_and_costs_nothing(case):
    found = integrity.analyse({"padding.py": UNPARSABLE[case], "data.py": b"import ctypes\n"})
    assert [(note.module, note.kind) for note in found.notes] == [("data.py", Kind.PROCESS)]
    assert found.not_analysed == {}


def test_a_defect_of_the_analysis_names_the_module_and_costs_nothing(monkeypatch):
    def broken(module, data):
        raise RecursionError("a defect")

    monkeypatch.setattr(integrity, "_module_notes", broken)
    found = integrity.analyse({"padding.py": b"import ctypes\n"})
    assert found.notes == [] and found.not_analysed == {"padding.py": "the analysis failed (RecursionError)"}


def test_it_reads_a_module_in_its_declared_coding():
    found = integrity.analyse({"padding.py": b"# -*- coding: latin-1 -*-\nimport ctypes  # \xe9t\xe9\n"})
    assert [note.text for note in found.notes] == ["import ctypes  # \u00e9t\u00e9"]


def test_it_analyses_a_bounded_amount_of_source_and_names_what_it_left():
    filler = b"x = 1\n" * (integrity.MAX_BYTES // 6 - 10)
    found = integrity.analyse({"a.py": filler, "b.py": b"import ctypes\n" * 200})
    assert found.notes == [] and list(found.not_analysed) == ["b.py"]
    assert "KiB" in found.not_analysed["b.py"]


def test_it_keeps_a_bounded_number_of_notes_and_counts_the_rest():
    found = notes_of("import os\n" + "os.kill(1, 9)\n" * (integrity.MAX_NOTES + 50))
    assert len(found.notes) == integrity.MAX_NOTES and found.more == 50


def test_it_shows_a_line_inert_and_bounded():
    line = "import ctypes; x = '\x1b[2J\u202e' + '" + "a" * 5000 + "'"
    (note,) = notes_of(line + "\n").notes
    assert "\x1b" not in note.text and "\u202e" not in note.text and "\\x1b" in note.text
    assert len(note.text) < 2 * integrity.MAX_LINE


def test_it_writes_and_reads_back_the_notes(tmp_path):
    found = notes_of(REACHES["forks"][0])
    integrity.write(found, tmp_path / integrity.FILE)
    assert integrity.read(tmp_path / integrity.FILE) == found
    assert json.loads((tmp_path / integrity.FILE).read_text())["notes"][0]["kind"] == "process"


@pytest.mark.parametrize("text", ["", "[1]", '{"notes": [{"module": "a.py"}]}', '{"notes": [{"line": true}]}'])
def test_it_reads_a_broken_notes_file_as_no_notes(tmp_path, text):
    (tmp_path / integrity.FILE).write_text(text)
    assert integrity.read(tmp_path / integrity.FILE) == Notes()


def test_it_knows_the_names_of_the_graders_in_worker_packages():
    assert {layers.RUNTIME_PACKAGE, layers.IN_WORKER_PACKAGE} <= integrity.GRADER_MODULES


# where the notes go: integrity.json of grade-all's gradings; never results.json, summary.md or a preview
SELECTED = rubric.load().select(["gather_final"])
NOTE = Note("padding.py", 3, Kind.PROCESS, "os.kill(os.getppid(), 9)  # the-note-itself", "os.kill")


def noted_result() -> GradingResult:
    items = [ItemResult(item.name, item.function, "", item.points, item.points, "passed") for item in SELECTED.items]
    return GradingResult(items, 1.0, {"grader_version": "0.1.0"}, integrity=Notes([NOTE]))


@pytest.fixture
def fake_grading(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(commands, "grade", lambda *arguments: noted_result())


def test_grade_all_keeps_the_notes_in_integrity_json_and_nowhere_a_student_sees(fake_grading, tmp_path):
    out = tmp_path / "out"
    assert commands.grade_one(build_submission(tmp_path / "submission"), out, ["gather_final"], by=SELECTED) == 0
    assert integrity.read(out / integrity.FILE) == Notes([NOTE])
    for shown in ("results.json", "summary.md"):
        assert "the-note-itself" not in (out / shown).read_text() and "os.kill" not in (out / shown).read_text()
    assert sorted(path.name for path in out.iterdir()) == ["integrity.json", "results.json", "summary.md"]


def test_grade_all_removes_the_notes_of_an_earlier_grading_when_it_starts_another(monkeypatch, tmp_path):
    class Idle:  # the grading process, not started: what is left in the folder is what grade-all removed
        def __init__(self, **arguments: object) -> None:
            pass

        def start(self) -> None:
            pass

    out = tmp_path / "out"
    out.mkdir()
    integrity.write(Notes([NOTE]), out / integrity.FILE)
    monkeypatch.setattr(grade_all, "_context", lambda grade: SimpleNamespace(Process=Idle))
    grade_all._start(commands.grade_one, tmp_path / "submission", out, None, None)
    assert not (out / integrity.FILE).exists()


def test_a_students_own_grading_writes_no_notes(fake_grading, tmp_path):
    out = tmp_path / "preview"
    assert commands.grade_command(build_submission(tmp_path / "submission"), out, ["gather_final"], None) == 0
    assert not (out / integrity.FILE).exists()


def test_the_gradescope_document_and_the_markdown_leave_the_notes_out():
    result = noted_result()
    assert "the-note-itself" not in json.dumps(writers.gradescope(result)) + writers.markdown(result)


def test_the_reference_grading_has_no_note(reference_result):
    assert reference_result.integrity == Notes()


@pytest.mark.gradings
def test_a_real_grading_by_grade_all_notes_the_line_it_read(tmp_path):
    reach = "import ctypes  # noted, and harmless"
    submission = build_submission(tmp_path / "submission", edits={"padding": appended_to("padding", reach)})
    assert commands.grade_one(submission, tmp_path / "out", ["gather_final"], require_isolation=False) == 0
    (note,) = integrity.read(tmp_path / "out" / integrity.FILE).notes
    assert (note.module, note.kind, note.text) == ("padding.py", Kind.PROCESS, reach)
    assert json.loads((tmp_path / "out" / "results.json").read_text())["score"] > 0
    assert "ctypes" not in (tmp_path / "out" / "results.json").read_text()

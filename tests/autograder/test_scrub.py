"""The reference's source and the hidden suites' text never reach the student's feedback."""

import json
import subprocess

import pytest
import tiers
from support import EXERCISES, SOLUTIONS, appended_to, build_submission, grade

from autograder import stubs
from autograder.checks.compare import CheckFailure
from autograder.grading import writers
from autograder.locations import CHECKS, SUITES, TODOS
from autograder.runtime.codec import Unsupported
from autograder.scrub import SHORTEST, WITHHELD, Scrubber, grader_fragments, squeeze
from autograder.student import InProcess, StudentError
from autograder.todos.rnn_forward.checks import check_rnn_forward_output


def reference_lines(function: str = "rnn_forward") -> list[str]:
    """The lines of one answer of the reference that say something (long enough to recognise)."""
    solution = next(todo.solution for todo in stubs.todos() if todo.function == function)
    return [line for line in solution.splitlines() if len(squeeze(line)) >= SHORTEST]


def quoted(text: str, lines: list[str]) -> list[str]:
    """The lines of `lines` that `text` still holds (whitespace and case aside)."""
    squeezed = squeeze(text)
    return [line for line in lines if squeeze(line) in squeezed]


@pytest.fixture(scope="module")
def scrubber() -> Scrubber:
    return Scrubber(grader_fragments())


def test_it_withholds_every_line_of_the_reference_whatever_its_layout(scrubber):
    lines = reference_lines()
    assert len(lines) >= 3
    source = "\n".join(lines)
    layouts = {
        "as written": source,
        "dedented": "\n".join(line.strip() for line in lines),
        "spaced out": "\n".join(" ".join(line) for line in lines),
        "upper case": source.upper(),
        "one repr line": repr(source),
        "inside a message": f"ValueError: here it is -> {lines[0].strip()} <- done",
    }
    for layout, text in layouts.items():
        scrubbed = scrubber.text(text)
        assert quoted(scrubbed, lines) == [], layout
        assert WITHHELD in scrubbed, layout


def test_it_withholds_the_hidden_suites_and_checks(scrubber):
    suite = (SUITES / "test_items.py").read_text()
    shared, check = (CHECKS / "edges.py").read_text(), (TODOS / "rnn_forward" / "checks.py").read_text()
    for text in (suite, shared, check):
        long_lines = [line for line in text.splitlines() if len(squeeze(line)) >= 40]
        assert quoted(scrubber.text(text), long_lines) == []


def test_it_keeps_what_the_student_has_anyway(scrubber):
    stub = (EXERCISES / "recurrence.py").read_text()  # given code, docstrings and TODO comments
    public_test = (EXERCISES / "tests" / "test_padding.py").read_text()
    assert scrubber.text(stub) == stub
    assert scrubber.text(public_test) == public_test


def test_it_keeps_ordinary_messages_and_printing(scrubber):
    texts = [
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)",
        "tensor([[ 0.1234, -0.5678,  0.9012],\n        [ 0.3456,  0.7890, -0.1234]], grad_fn=<TanhBackward0>)",
        "epoch 3: loss 0.6931, accuracy 0.5020",
        '  File "exercises/recurrence.py", line 40, in rnn_forward\n    h = torch.tanh(x[:, t] @ w.T)',
    ]
    for text in texts:
        assert scrubber.text(text) == text


def test_it_keeps_the_students_own_code_even_where_it_equals_the_reference():
    own = Scrubber.for_submission(SOLUTIONS)  # a student who wrote exactly the reference
    source = "\n".join(reference_lines())
    assert own.text(source) == source


def test_it_scrubs_every_string_inside_a_returned_value(scrubber):
    line = reference_lines()[0].strip()
    value = {"message": line, line: [Unsupported(line), (line, 3)], "fine": "ok"}
    scrubbed = scrubber.value(value)
    assert scrubbed["fine"] == "ok" and scrubbed["message"] == WITHHELD
    assert scrubbed[WITHHELD][0] == Unsupported(WITHHELD)
    assert scrubbed[WITHHELD][1] == (WITHHELD, 3)
    assert quoted(json.dumps(scrubbed, default=repr), [line]) == []


def test_it_keeps_a_quote_out_of_a_checks_feedback(scrubber):
    lines = reference_lines()

    def rnn_forward(*args, **kwargs):
        raise ValueError("\n".join(lines))

    student = InProcess({"rnn_forward": rnn_forward})
    student.scrubber = scrubber
    with pytest.raises((StudentError, CheckFailure)) as failure:  # the check says what raised, with the input
        check_rnn_forward_output(student)
    assert "rnn_forward raised ValueError" in str(failure.value)
    assert quoted(str(failure.value), lines) == []


# the reference's answer, reversed in the source: only the running code can put it together
LEAK = """
_HIDDEN = {hidden!r}


def rnn_forward(x, weight_ih, weight_hh, bias_ih, bias_hh, h0=None):
    text = _HIDDEN[::-1]
    print(text)
    raise ValueError(text)
"""


@pytest.mark.gradings
def test_it_keeps_a_quote_put_together_at_run_time_out_of_every_report(submission, tmp_path):
    lines = reference_lines()
    leak = LEAK.format(hidden="\n".join(lines)[::-1])
    result = grade(submission({"recurrence": appended_to("recurrence", leak, EXERCISES)}), only=["rnn_forward"])
    writers.write_results_json(result, tmp_path / "results.json")
    writers.write_summary_md(result, tmp_path / "summary.md")
    assert result.score == 0
    for report in ("results.json", "summary.md"):
        text = (tmp_path / report).read_text(encoding="utf-8")
        if report == "results.json":
            text = "\n".join(test["output"] for test in json.loads(text)["tests"])
        assert quoted(text, lines) == [], report
        assert WITHHELD in text, report


READ_FROM_DISK = """

def rnn_forward(x, weight_ih, weight_hh, bias_ih, bias_hh, h0=None):
    text = open({path!r}).read()
    print(text)
    raise ValueError(text)
"""


@pytest.mark.deployed  # grades with the deployed grader's interpreter
def test_it_keeps_the_reference_out_of_the_reports_of_a_grading_without_isolation(tmp_path):
    """The fallback tier, opted out of isolation: the worker reads the reference from disk, and still nothing shows."""
    tiers.require()
    tier = tiers.TIERS["fallback"]
    work = tiers.work_folder(tmp_path / "work", tier)
    leak = READ_FROM_DISK.format(path=str(SOLUTIONS / "recurrence.py"))
    submission = build_submission(
        work / "submission", EXERCISES, {"recurrence": appended_to("recurrence", leak, EXERCISES)}
    )
    out = tiers.work_folder(work / "out", tier)
    grade = [str(tiers.python()), "-m", "autograder.cli", "grade", str(submission), "--out", str(out)]
    grade += ["--only", "rnn_forward", "--no-require-isolation"]
    command = tiers.command(tier, grade, work)
    done = subprocess.run(command, env=tiers.environment(tier, work), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    document = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert document["extra_data"]["isolation"]["hidden_instructor_files"] is False  # the file was there to read
    lines = reference_lines()
    for where, text in {
        "results.json": (out / "results.json").read_text(encoding="utf-8"),
        "summary.md": (out / "summary.md").read_text(encoding="utf-8"),
        "the terminal": done.stdout + done.stderr,
    }.items():
        assert quoted(text, lines) == [], where
    assert WITHHELD in "\n".join(test["output"] for test in document["tests"])

"""The attack suite's machinery: the attacks, their submissions, their gradings and what is checked.

tests/attacks/test_attacks.py grades every attack as this process runs (its own tier); test_tiers.py
grades those whose defence differs by tier in each tier this machine can produce (tests/helpers/tiers.py).

`submissions/<attack>/` holds only the files an attack changes: exercise modules (only the one or
two functions turned into the attack, appended to the base module so that they replace its own) or
files the grader must never read (conftest.py, pytest.ini, sitecustomize.py, torch.py...). They are
laid over the reference solutions or, for the attacks that try to force passes, over the stubs,
whose honest score is 0.

Placeholders in those files say where an attack would like to write, and what it may name:
@@NAME@@ the attack, @@MARK@@ /tmp/autograde-attack-<name>-<token>, @@PARENT@@ the folder holding
the submission, @@SUBMISSION@@ and @@OUT@@ the submission and its results folder, @@REPO@@ this
repository, @@TOKEN@@ digits in the command line of every process it starts, @@PORT@@ the loopback
port of a server the test runs, which hands the reference's set_forget_bias to whoever connects,
@@SCOPE@@ what an attack on other processes may aim at (the folder its grading's command lines
name, or "*" for every process it sees, in a PID namespace of the test's own).
Every attack is bounded on its own (in time, memory and processes), connects
to the loopback only and aims only at those places, so it is safe on a shared machine even where the
grader fails to stop it.

Attacks on different modules and functions share one grading (a group) to keep the suite fast;
every attack still has its own test, its own items and its own traces. A grading in a tier is made
once per run (`once_per_run`): where this process is root and the tiers can be produced, test_attacks'
grading of a group that test_tiers grades in the root tier is that very grading (the deployed grader,
by its command line, as this process runs), made by whichever module asks first and read by the other.
"""

import contextlib
import hashlib
import importlib
import inspect
import json
import multiprocessing
import os
import re
import secrets
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import gradescope_schema
import pytest
from once_per_run import shared
from support import EXERCISES, ROOT, SOLUTIONS, appended_to, build_submission, grade
from tiers import TIERS, Expected, Tier, command, environment, here, possible, python, work_folder

from autograder import rubric, sandbox
from autograder.grading import writers
from autograder.grading.grade import IsolationRequired, failed_grading, preloads, run_environment
from autograder.roster.grade_all import run_zygote
from autograder.sandbox import WorkerLimits, record, zygote
from solutions.initialisation import set_forget_bias as set_forget_bias_reference

SUBMISSIONS = ROOT / "tests" / "attacks" / "submissions"
RUBRIC = rubric.load()
FULL, ZERO = "full", "zero"
MAX_RESULTS_BYTES = 1 << 20
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # tab and newline are the only control characters allowed


@dataclass(frozen=True)
class Group:
    """Attacks graded together: one submission, one grading."""

    name: str
    base: Path = SOLUTIONS  # what the attacks' files are laid over
    # rubric limits changed to keep the grading short, wherever it is graded (by the command line: a rubric file)
    limits: dict[str, float] = field(default_factory=dict)
    cli: bool = False  # graded by `autograde grade` in a subprocess, whose printing is checked too
    settle: float = 0.0  # seconds to give background processes before looking for their traces

    def promised_seconds(self) -> float:
        """What the grader promises a grading takes at most: its grading cap, and one worker's start-up."""
        return replace(RUBRIC.limits, **self.limits).grading_timeout + WorkerLimits().start_timeout


@dataclass(frozen=True)
class Attack:
    """One attack: its folder, its grading, and what each graded function honestly earns."""

    name: str  # its folder in submissions/
    group: str
    files: tuple[str, ...]  # what the folder holds: the submission's files it replaces or adds
    expected: dict[str, str]  # function (or one item, "F: aspect") -> FULL or ZERO for each of its items
    feedback: str = ""  # a pattern the output of each of its failed items matches
    xfail: str = ""  # "grader: what is missing", while the grader does not defend the attack


GROUPS = {
    group.name: group
    for group in [
        Group("configuration", base=EXERCISES),
        Group("monkeypatching"),
        Group("imports"),
        Group("exits", limits={"memory_mb": 2048}),  # the memory bomb meets the ceiling sooner
        Group("hangs", limits={"call_timeout": 3.0}),  # two timeouts, each followed by a fresh worker
        Group("processes", settle=2.0),
        Group("disk", limits={"disk_mb": 64}),  # a smaller bound: filled sooner
        Group("values"),
        Group("values_and_state"),
        Group("values_and_cheats"),
        Group("answers"),
        Group("returned_tensors"),
        Group("output", cli=True),
        Group("kills", cli=True),
        Group("spinners"),  # a grading of its own each: the spinners take the processes a thread bomb needs
        Group("threads"),
        Group("reach", cli=True, settle=2.0),  # other processes: the grader, the supervisor, other workers
        Group("thresholds"),  # the grader's training runs: a few minutes of CPU each
        Group("evaluation_switch"),
        Group("sharing"),  # objects that outlive a worker, reached by number: System V IPC, POSIX queues, keys
    ]
}

# The groups test_tiers grades in each tier (see its docstring for why these): those that meet the OS
# (returned_tensors: the grader's own reading of an answer, the same in every tier, shown in each)
MEETS_THE_OS = ("imports", "values_and_cheats", "processes", "kills", "disk", "answers", "reach", "sharing")
MEETS_THE_OS += ("returned_tensors",)
# the threshold items are decided by the grader from parameters, whatever the worker's layers: shown in every tier
THRESHOLDS = ("thresholds", "evaluation_switch")
# a process's CPU: spinners forked up to the process ceiling, 64 threads; graded in every tier that grades
CPU = ("spinners", "threads")
TIER_GROUPS = {
    # a grader's machine, sudo: the deployed grader (test_attacks grades the other groups here: editable)
    "root": (
        *("imports", "values_and_cheats", "processes", "disk", "answers", "returned_tensors", "reach", "sharing"),
        *CPU,
        *THRESHOLDS,
    ),
    "docker": (*MEETS_THE_OS, *CPU, *THRESHOLDS),
    "user namespace": (*MEETS_THE_OS, *CPU, *THRESHOLDS),
    "landlock": (*MEETS_THE_OS, "hangs", "exits", *CPU, *THRESHOLDS),
    "fallback": ("imports",),  # refused: one grading shows it
}

NOT_DONE = r"is not done yet"
TIMEOUT = r"did not finish \(timeout\)"
TOO_LARGE = r"did not finish \(crash\): the answer was \d+ bytes, more than the \d+ allowed"
LEARNED_NOTHING = r"does not come from what"
REFUSED = r"(?s)raised PermissionError: \[Errno 1\] .*those calls are refused"  # student.REFUSED_WHILE_GRADING
ATTACKS = [
    # the grader's own configuration: none of these files is read, so the stubs still earn 0
    Attack(
        "conftest_forces_pass",
        "configuration",
        ("conftest.py", "exercises/conftest.py", "exercises/tests/conftest.py"),
        {"gather_final": ZERO},
        NOT_DONE,
    ),
    Attack(
        "ini_addopts",
        "configuration",
        ("exercises/forcepass.py", "pyproject.toml", "pytest.ini", "setup.cfg", "tox.ini"),
        {"masked_mean": ZERO},
        NOT_DONE,
    ),
    Attack(
        "sitecustomize_and_pth",
        "configuration",
        ("attack.pth", "exercises/attack.pth", "exercises/sitecustomize.py", "sitecustomize.py", "usercustomize.py"),
        {"lstm_step": ZERO},
        NOT_DONE,
    ),
    Attack(
        "torch_shadow",
        "configuration",
        ("exercises/numpy.py", "exercises/torch.py", "torch.py"),
        {"set_forget_bias": ZERO},
        NOT_DONE,
    ),
    # changing the worker's libraries changes nothing in the grader's comparisons
    Attack(
        "monkeypatch_at_import",
        "monkeypatching",
        ("exercises/baseline.py", "exercises/padding.py"),
        {"bag_of_counts": ZERO, "gather_final": ZERO, "masked_mean": ZERO},
    ),
    # a module that does not import costs only its own items
    Attack(
        "sys_exit_at_import",
        "imports",
        ("exercises/baseline.py",),
        {"bag_of_counts": ZERO, "masked_mean": FULL},
        r"exercises/baseline\.py could not be imported: SystemExit",
    ),
    Attack(
        "syntax_error",
        "imports",
        ("exercises/recurrence.py",),
        {"lstm_step": ZERO},
        r"exercises/recurrence\.py could not be imported: SyntaxError",
    ),
    Attack("network_at_import", "imports", ("exercises/initialisation.py",), {"set_forget_bias": ZERO}, NOT_DONE),
    # leaving, raising what is not an Exception, unreadable or huge exceptions, running out of memory
    Attack(
        "os_exit",
        "exits",
        ("exercises/padding.py",),
        {"gather_final": ZERO, "masked_mean": FULL},
        r"did not finish \(exit\)",
    ),
    Attack(
        "raise_base_exceptions",
        "exits",
        ("exercises/recurrence.py",),
        {"lstm_step": ZERO, "rnn_forward": ZERO},
        r"raised (KeyboardInterrupt|SystemExit)",
    ),
    Attack("exception_str_raises", "exits", ("exercises/baseline.py",), {"bag_of_counts": ZERO}, r"raised Unprintable"),
    Attack(
        "huge_exception_message",
        "exits",
        ("exercises/language_model.py",),
        {"sample": ZERO},
        r"raised ValueError: sample gave up",
    ),
    # whichever limit ends it first (the ceiling, or the call's timeout on a busy machine), it earns 0 and
    # its worker is gone: the group's processes are looked for after the grading like every attack's
    Attack(
        "memory_bomb",
        "exits",
        ("exercises/initialisation.py",),
        {"set_forget_bias": ZERO},
        r"ran out of memory|did not finish \(timeout\)",
    ),
    # hanging: each call is stopped after call_timeout, and the next item gets a fresh worker
    Attack("infinite_loop", "hangs", ("exercises/padding.py",), {"gather_final": ZERO, "masked_mean": FULL}, TIMEOUT),
    Attack("ignore_sigterm", "hangs", ("exercises/baseline.py",), {"bag_of_counts": ZERO}, TIMEOUT),
    Attack("input_call", "hangs", ("exercises/initialisation.py",), {"set_forget_bias": ZERO}, r"EOFError"),
    # processes and files that would outlive the call
    Attack("fork_bomb", "processes", ("exercises/baseline.py",), {"bag_of_counts": ZERO, "lstm_step": FULL}),
    Attack("background_process", "processes", ("exercises/padding.py",), {"gather_final": ZERO, "masked_mean": FULL}),
    Attack("fake_results_json", "processes", ("exercises/initialisation.py",), {"set_forget_bias": ZERO}),
    # the disk: every place the worker may write is bounded, its call fails, the next gets a fresh worker
    Attack(
        "disk_filler",
        "disk",
        ("exercises/padding.py",),
        {"masked_mean": ZERO, "gather_final": FULL},
        r"did not finish \(disk full\): your code wrote more than 64 MB to disk",
    ),
    # a value attack graded beside the disk's (its group holds the memo attack on baseline.py)
    Attack("return_list", "disk", ("exercises/baseline.py",), {"bag_of_counts": ZERO}, r"returned a list"),
    # return values that are not what they seem
    Attack("return_tensor_subclass", "values", ("exercises/padding.py",), {"gather_final": ZERO}, r"Agreeable"),
    Attack("return_always_equal", "values", ("exercises/recurrence.py",), {"lstm_step": ZERO}),
    Attack(
        "return_nan_inf",
        "values",
        ("exercises/baseline.py",),
        {"bag_of_counts": ZERO, "fit_baseline": ZERO},
    ),
    Attack("return_numpy", "values", ("exercises/language_model.py",), {"next_token_loss": ZERO}),
    Attack("return_broadcastable", "values_and_state", ("exercises/padding.py",), {"gather_final": ZERO}),
    Attack("return_input", "values_and_state", ("exercises/recurrence.py",), {"lstm_step": ZERO}),
    Attack(
        "global_torch_state",
        "values_and_state",
        ("exercises/baseline.py",),
        {"bag_of_counts": FULL, "masked_mean": FULL, "rnn_forward": FULL, "sample": FULL, "set_forget_bias": FULL},
    ),
    Attack(  # the right values as float64: the dtype is judged by the legal inputs item alone (issue 46)
        "return_wrong_dtype",
        "values_and_cheats",
        ("exercises/padding.py",),
        {"gather_final: values": FULL, "gather_final: legal inputs": ZERO},
        r"float64",
    ),
    Attack("mutate_input", "values_and_cheats", ("exercises/recurrence.py",), {"lstm_step": ZERO}),
    Attack("import_solutions", "values_and_cheats", ("exercises/initialisation.py",), {"set_forget_bias": ZERO}),
    Attack("search_expected", "values_and_cheats", ("exercises/language_model.py",), {"sample": ZERO}),
    Attack("read_memo", "values_and_cheats", ("exercises/baseline.py",), {"fit_baseline": ZERO}),
    # answers far larger than asked for: refused unread past an answer's frame, or their texts cut as they are read
    Attack("huge_string_answer", "answers", ("exercises/baseline.py",), {"bag_of_counts": ZERO}, TOO_LARGE),
    Attack("huge_answer", "answers", ("exercises/language_model.py",), {"sample": ZERO}, TOO_LARGE),
    Attack(
        "huge_type_name",
        "answers",
        ("exercises/padding.py",),
        {"gather_final": ZERO, "masked_mean": FULL},
        r"is a exercises\.padding\.(Huge)+\w* \.\.\. cut: \d+ more characters; expected",
    ),
    Attack(
        "huge_error_lines",
        "answers",
        ("exercises/recurrence.py",),
        {"rnn_forward": ZERO, "lstm_step": FULL},
        r"raised ValueError: rnn_forward gave up:( \([^)]*\)\.)?\n(e\n)+\.\.\. cut: \d+ more lines",
    ),
    # tensors that claim more than they hold, sent as they are by a changed codec: each checked before any
    # arithmetic (dense, its own memory, the bytes received, its shape), the grader's memory that of an honest grading
    Attack(
        "stride0_gradients",
        "returned_tensors",
        ("exercises/recurrence.py",),
        {"rnn_forward: gradients": ZERO, "rnn_forward: output": FULL, "rnn_forward: initial state": FULL},
        r"the gradient reaching x is a float32 tensor of shape \(\d+, 3, 5, 4\) that holds each of its values at \d+ "
        r"positions \(a stride-0 view",
    ),
    Attack(
        "oversized_gradients",
        "returned_tensors",
        ("exercises/language_model.py",),
        {
            "next_token_loss: gradients": ZERO,
            "next_token_loss: trains the pattern model": ZERO,
            "next_token_loss: values": FULL,
            "next_token_loss: padding": FULL,
        },
        r"shape \(32768, 1",
    ),
    Attack(
        "overlapping_strides",
        "returned_tensors",
        ("exercises/padding.py",),
        {"gather_final": ZERO, "masked_mean": FULL},
        r"gather_final is a float32 tensor of shape \(4, 5\) whose positions overlap in memory",
    ),
    Attack(
        "inflated_storage",
        "returned_tensors",
        ("exercises/baseline.py",),
        {"bag_of_counts": ZERO, "fit_baseline": FULL},
        r"did not finish \(crash\): its answer could not be read: an entry of its archive is compressed",
    ),
    # output: bounded, and never read as escapes or workflow commands (graded by the command line)
    Attack("print_flood", "output", ("exercises/padding.py",), {"gather_final": ZERO, "masked_mean": FULL}),
    Attack("print_escapes", "output", ("exercises/recurrence.py",), {"lstm_step": ZERO}),
    Attack("print_fake_score", "output", ("exercises/initialisation.py",), {"set_forget_bias": ZERO}),
    Attack("grader_stdout", "output", ("exercises/language_model.py",), {"sample": ZERO}),
    Attack("exception_escapes", "output", ("exercises/baseline.py",), {"bag_of_counts": ZERO}, r"raised ValueError"),
    # killing the grader, or the worker's whole process group (graded by the command line, in its own session)
    Attack("kill_parent", "kills", ("exercises/padding.py",), {"gather_final": ZERO, "masked_mean": FULL}),
    Attack("killpg", "kills", ("exercises/recurrence.py",), {"lstm_step": ZERO}),
    # CPU: right answers, with spinners or 64 threads left running for the gradings beside it
    # (tests/autograder/sandbox/test_neighbours.py grades them beside the reference)
    Attack("cpu_hog", "spinners", ("exercises/baseline.py",), {"bag_of_counts": FULL}),
    Attack("thread_bomb", "threads", ("exercises/padding.py",), {"masked_mean": FULL}),
    # changing other processes by their id, without a signal (graded by the command line, in its own session);
    # each returns the reference's answer unless a call got through: it earns full marks only where all are refused
    Attack("prlimit_others", "reach", ("exercises/padding.py",), {"gather_final": FULL, "masked_mean": FULL}),
    Attack("starve_supervisor", "reach", ("exercises/recurrence.py",), {"lstm_step": FULL}),
    Attack("reschedule_others", "reach", ("exercises/initialisation.py",), {"set_forget_bias": FULL}),
    # right answers, and a process that forks twice, leaves its session and ignores every signal it can (here: the
    # processes group's fork bomb would leave it no process to start)
    Attack("orphan_ignores_signals", "reach", ("exercises/baseline.py",), {"bag_of_counts": FULL}),
    # an answer handed through an object that outlives the worker, by a number any other worker could reach (a
    # channel between two students of one run, memory left on the machine): each refused, in every tier
    Attack("shared_memory", "sharing", ("exercises/baseline.py",), {"bag_of_counts": ZERO}, REFUSED),
    Attack("message_queue", "sharing", ("exercises/padding.py",), {"gather_final": ZERO}, REFUSED),
    Attack("semaphores", "sharing", ("exercises/initialisation.py",), {"set_forget_bias": ZERO}, REFUSED),
    Attack("posix_message_queue", "sharing", ("exercises/language_model.py",), {"next_token_loss": ZERO}, REFUSED),
    Attack("kernel_keys", "sharing", ("exercises/recurrence.py",), {"lstm_step": ZERO}, REFUSED),
    # threshold items whose accuracy does not come from what was learned: a rule, an evaluation-mode switch,
    # a replaced training routine (the other items of those functions are graded too, as they honestly come)
    Attack(
        "rule_forward",
        "thresholds",
        ("exercises/classifier.py",),
        {"SequenceClassifier: learns the task": ZERO, "SequenceClassifier: learns padded rows": ZERO},
        LEARNED_NOTHING,
    ),
    Attack(
        "replaced_training_routine",
        "thresholds",
        ("exercises/language_model.py",),
        {"next_token_loss: trains the pattern model": ZERO},
        r"not shifted|tokens\[:, 1:\]",
    ),
    Attack(
        "evaluation_switch",
        "evaluation_switch",
        ("exercises/classifier.py",),
        {
            "SequenceClassifier: last pooling": FULL,
            "SequenceClassifier: padded batch": FULL,
            "SequenceClassifier: learns the task": ZERO,
            "SequenceClassifier: learns padded rows": ZERO,
        },
        LEARNED_NOTHING,
    ),
]
SLOWEST_FIRST = (
    "thresholds",
    "evaluation_switch",
    "exits",
    "hangs",
    "answers",
    "output",
    "kills",
    "processes",
    "values",
)


def members(group: Group) -> list[Attack]:
    return [attack for attack in ATTACKS if attack.group == group.name]


def function_of(key: str) -> str:
    """The function an expectation is about: its key names a function, or one of its items ("F: aspect")."""
    return key.split(":", 1)[0]


def graded_functions(group: Group) -> list[str]:
    return list(dict.fromkeys(function_of(key) for attack in members(group) for key in attack.expected))


def expected_items(key: str) -> list[rubric.Item]:
    """The rubric's items an expectation covers: every item of a function, or the one item it names."""
    if ":" in key:
        return [item for item in RUBRIC.items if item.name == key]
    return list(RUBRIC.select([key]).items)


def attack_files(attack: Attack) -> list[Path]:
    """The attack's files, relative to its folder (and so to the submission)."""
    folder = SUBMISSIONS / attack.name
    return sorted(path.relative_to(folder) for path in folder.rglob("*") if path.is_file())


# -- building a group's submission ------------------------------------------------------------
@dataclass
class Built:
    folder: Path  # holds only submission/, out/ and tmp/: anything else in it was written by an attack
    submission: Path
    out: Path
    tmp: Path  # the grader's TMPDIR: its sandbox, so every process of the grading names this path
    marks: dict[str, Path]  # attack -> the file it tries to leave in /tmp
    tokens: dict[str, str]  # attack -> the digits in its processes' command lines
    server: "AnswerServer"


class AnswerServer:
    """A loopback server that hands the reference's set_forget_bias to whoever connects, and counts them."""

    ANSWER = inspect.getsource(set_forget_bias_reference).encode()

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.socket.settimeout(0.2)
        self.port = self.socket.getsockname()[1]
        self.heard: list[str] = []  # the first line each client sent
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.socket.accept()
            except TimeoutError:
                continue
            with connection:
                connection.settimeout(2)
                with contextlib.suppress(OSError):
                    self.heard.append(connection.recv(200).decode(errors="replace").strip())
                    connection.sendall(self.ANSWER)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.socket.close()


def build(group: Group, folder: Path) -> Built:
    submission = build_submission(folder / "submission", group.base)
    built = Built(folder, submission, folder / "out", private_tmp(folder), {}, {}, AnswerServer())
    port = str(built.server.port)
    for attack in members(group):
        token = str(secrets.randbelow(9 * 10**8) + 10**8)
        mark = Path(f"/tmp/autograde-attack-{attack.name}-{token}")
        built.marks[attack.name], built.tokens[attack.name] = mark, token
        values = {
            "@@NAME@@": attack.name,
            "@@MARK@@": str(mark),
            "@@PARENT@@": str(folder),
            "@@SUBMISSION@@": str(submission),
            "@@OUT@@": str(built.out),
            "@@REPO@@": str(ROOT),
            "@@TOKEN@@": token,
            "@@PORT@@": port,
            "@@SCOPE@@": str(folder),
        }
        for relative in attack_files(attack):
            text = (SUBMISSIONS / attack.name / relative).read_text()
            for placeholder, value in values.items():
                text = text.replace(placeholder, value)
            (submission / relative).parent.mkdir(parents=True, exist_ok=True)
            (submission / relative).write_text(laid_over(group.base, relative, text))
    return built


def private_tmp(folder: Path) -> Path:
    """A temporary folder for the grading alone, owned like `folder` (the tier's user), open to all as /tmp is."""
    tmp = folder / "tmp"
    tmp.mkdir()
    owner = folder.stat()
    os.chown(tmp, owner.st_uid, owner.st_gid)
    tmp.chmod(0o1777)
    return tmp


def laid_over(base: Path, relative: Path, text: str) -> str:
    """An attack's exercise module holds only what it changes: it follows the base module, replacing its names."""
    if relative.parent.name != "exercises" or not (base / relative.name).exists():
        return text
    return appended_to(relative.stem, text, base)


def digest(folder: Path) -> dict[str, str]:
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


# -- processes an attack started --------------------------------------------------------------
def processes_with(token: str) -> list[int]:
    """Live processes whose command line holds `token` (zombies are dead enough)."""
    found = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if token.encode() in command and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def survivors(tokens: dict[str, str], wait: float = 3.0) -> dict[str, list[int]]:
    """The attacks' processes still alive once the grading is over (given `wait` seconds to die)."""
    deadline = time.monotonic() + wait
    while True:
        alive = {name: pids for name, token in tokens.items() if (pids := processes_with(token))}
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


def kill_all(tokens: dict[str, str]) -> None:
    """SIGKILL whatever the attacks started that is still alive, by process id."""
    for token in tokens.values():
        for pid in processes_with(token):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


# -- grading ------------------------------------------------------------------------------------
PARALLEL_GRADINGS = 2  # as tests/corpus: each grading is a grader and its worker, mostly one of them busy
HARNESS_SLACK = 120.0  # seconds past the grader's own promise before the test stops waiting (a hang, then)
HERE = here()


@dataclass
class Graded:
    """What one group's grading gave and left behind."""

    seconds: float = 0.0
    error: str = ""  # grading raised, overran or the command failed
    results: str = ""  # the text of results.json
    summary: str = ""  # the text of summary.md
    stdout: str = ""  # what `autograde grade` printed (cli groups), stderr included
    refused: str = ""  # why the grading refused to run (--require-isolation where isolation is missing)
    isolation: Any = None  # what results.json says was in force, for the messages
    traces: dict[str, list[str]] = field(default_factory=dict)  # attack ("" for the group) -> what it left

    def trace(self, name: str, text: str) -> None:
        self.traces.setdefault(name, []).append(text)


def grade_with_tmp(tmp: Path, *arguments: Any, **options: Any) -> Any:
    """`support.grade` with `tmp` as the temporary folder (in a pool process, which runs one grading at a time)."""
    tempfile.tempdir = str(tmp)
    try:
        return grade(*arguments, **options)
    finally:
        tempfile.tempdir = None


def grade_in_pool(group: Group, built: Built, graded: Graded, pool: Any) -> None:
    """`support.grade` in a process of the pool (never in pytest's own), then results.json written here."""
    built.out.mkdir()
    started = time.monotonic()
    arguments = (built.tmp, built.submission, graded_functions(group))
    pending = pool.apply_async(grade_with_tmp, arguments, {**group.limits, "require_isolation": True})
    try:
        result = pending.get(timeout=group.promised_seconds() + HARNESS_SLACK)
    except multiprocessing.TimeoutError:
        graded.seconds = time.monotonic() - started
        graded.error = f"grading still running after {group.promised_seconds() + HARNESS_SLACK:g} s"
        return
    except IsolationRequired as refusal:
        graded.seconds = time.monotonic() - started
        graded.refused = str(refusal)
        environment = run_environment(sandbox.available(), True)
        result = failed_grading(RUBRIC.select(graded_functions(group)), str(refusal), graded.seconds, environment)
    except Exception as error:
        graded.seconds = time.monotonic() - started
        graded.error = f"grading raised {type(error).__name__}: {error}"
        return
    graded.seconds = time.monotonic() - started
    graded.error = "" if graded.refused else result.error
    time.sleep(group.settle)
    for path in sorted(built.out.iterdir()):  # before the grader's own results are written, nothing is there
        blame(graded, path.read_text(errors="replace") if path.is_file() else "", f"wrote {path} during the grading")
    writers.write_results_json(result, built.out / "results.json")
    writers.write_summary_md(result, built.out / "summary.md")


def grade_by_command(group: Group, built: Built, graded: Graded, tier: Tier, work: Path) -> None:
    """`autograde grade --require-isolation` in `tier`, in a session of its own (an attack reaching the
    grader's group reaches nothing else); `work` is the tier's work folder."""
    argv = [str(python()), "-m", "autograder.cli", "grade", str(built.submission), "--out", str(built.out)]
    argv += ["--only", ",".join(graded_functions(group)), "--require-isolation"]
    if group.limits:  # the memory bomb, the hangs: the deployed 4 GiB and 10 s cost a tier about 40 s of CPU
        argv += ["--rubric", str(rubric_with_limits(group, work))]
    limit = group.promised_seconds() + HARNESS_SLACK
    started = time.monotonic()
    process = subprocess.Popen(
        command(tier, argv, work, start=built.folder),
        cwd=built.folder,
        env={**environment(tier, work), "TMPDIR": str(built.tmp)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        stdout, _ = process.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, _ = process.communicate()
        graded.error = f"`autograde grade` still running after {limit:g} s"
    graded.seconds = time.monotonic() - started
    graded.stdout = stdout.decode("utf-8", "replace")
    refusal = [line for line in graded.stdout.splitlines() if line.startswith("autograde: isolation required")]
    if process.returncode == 2 and refusal:
        graded.refused = refusal[0].removeprefix("autograde: ")
    elif process.returncode != 0 and not graded.error:
        graded.error = f"`autograde grade` exited with status {process.returncode}:\n{graded.stdout[-3000:]}"
    time.sleep(group.settle)


def rubric_with_limits(group: Group, work: Path) -> Path:
    """A copy of the rubric with the group's limits, in the tier's work folder (readable by its user)."""
    text = rubric.load().path.read_text(encoding="utf-8")
    for name, value in group.limits.items():
        text = re.sub(rf"^{name} = \S+", f"{name} = {value}", text, count=1, flags=re.MULTILINE)
    path = work / f"rubric-{group.name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def blame(graded: Graded, content: str, text: str) -> None:
    """Record a trace against the attacks it names (every trace an attack writes names it), else the group."""
    named = [attack.name for attack in ATTACKS if f"attack {attack.name}" in content]
    for name in named or [""]:
        graded.trace(name, text)


def look_for_traces(built: Built, before: dict[str, str], graded: Graded) -> None:
    """What the attacks left outside the grading directory (the sandbox the grader makes and removes)."""
    for name, mark in built.marks.items():
        if mark.exists():
            graded.trace(name, f"wrote {mark}: {mark.read_text(errors='replace')[:200]!r}")
    for path in sorted(built.folder.iterdir()):
        if path.name not in ("submission", "out", "tmp"):
            owner = path.name.removeprefix("escaped-")
            graded.trace(owner if owner in built.marks else "", f"wrote {path} next to the submission")
    for path in sorted(built.out.iterdir()) if built.out.exists() else []:
        if path.name not in ("results.json", "summary.md"):
            blame(graded, path.read_text(errors="replace") if path.is_file() else "", f"wrote {path}")
    after = digest(built.submission)
    for relative in sorted(set(before) | set(after)):
        if before.get(relative) != after.get(relative):
            path = built.submission / relative
            content = path.read_text(errors="replace") if path.exists() else ""
            blame(graded, content, f"changed the submission's {relative} (it is copied, never written)")
    for name, pids in survivors(built.tokens).items():
        graded.trace(name, f"{len(pids)} process(es) it started outlived the grading")
    # the worker and its supervisor name the grading's sandbox (in built.tmp): none may outlive it, and
    # the sandbox goes with them, whichever limit (timeout, memory, a death) ended the last call
    for pids in survivors({"": str(built.tmp)}).values():
        graded.trace("", f"{len(pids)} process(es) of the grading (its worker or supervisor) outlived it")
    for path in sorted(built.tmp.iterdir()):
        graded.trace("", f"the grading left {path.name} in its temporary folder")
    for line in built.server.heard:
        blame(graded, line, f"reached the test's loopback server ({line!r})")


def run_group(group: Group, folder: Path, pool: Any, tier: Tier | None = None) -> Graded:
    """Build the group's submission, grade it, and look for what its attacks left behind.

    `tier`: graded by the command line in that tier (tests/helpers/tiers.py), `folder` inside its
    work folder; None: as this process runs.
    """
    built = build(group, folder)
    before = digest(built.submission)
    graded = Graded()
    try:
        if tier is not None:
            grade_by_command(group, built, graded, tier, folder.parent)
        elif group.cli:
            grade_by_command(group, built, graded, HERE, folder.parent)
        else:
            grade_in_pool(group, built, graded, pool)
        look_for_traces(built, before, graded)
        results = built.out / "results.json"
        if results.exists():
            graded.results = results.read_text(encoding="utf-8")
            graded.summary = (built.out / "summary.md").read_text(encoding="utf-8")
            if group.settle:  # a process left behind would rewrite the grader's results now
                time.sleep(1.0)
                now = results.read_text(encoding="utf-8")
                if now != graded.results:
                    blame(graded, now, f"rewrote {results} after the grading")
        with contextlib.suppress(ValueError, KeyError, TypeError):
            graded.isolation = json.loads(graded.results)["extra_data"].get("isolation")
    finally:
        built.server.close()
        kill_all(built.tokens)
        for mark in built.marks.values():
            mark.unlink(missing_ok=True)
    return graded


# -- what is checked --------------------------------------------------------------------------
def reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def unclean(text: str, where: str) -> list[str]:
    """Escapes, control characters or workflow commands in `text`."""
    problems = []
    if "\x1b" in text:
        problems.append(f"{where} holds an ESC character")
    control = CONTROL.search(text.replace("\x1b", ""))
    if control:
        problems.append(f"{where} holds the control character {control[0]!r}")
    commands = [line for line in text.splitlines() if line.lstrip().startswith("::")]
    if commands:
        problems.append(f"{where} has a line that a CI log reads as a workflow command: {commands[0][:80]!r}")
    return problems


def left_behind_problems(graded: Graded) -> list[str]:
    """What the grader itself found of the worker's processes after it, as results.json records: looked for by
    at least one mark, none found (the supervisor ended them all)."""
    left = record.from_dict(graded.isolation).left_behind
    if left is None or not left.checked:
        return [f"results.json does not say what the grader found after the worker (isolation: {graded.isolation})"]
    if not left.proven_none:
        return [f"the grader found processes of the worker after it: {left.as_dict()}"]
    return []


def results_problems(graded: Graded) -> list[str]:
    """results.json: present, strict JSON, the Gradescope schema, small, every text clean and bounded."""
    if not graded.results:
        return ["no results.json was written"]
    size = len(graded.results.encode("utf-8"))
    problems = [f"results.json is {size} bytes"] if size >= MAX_RESULTS_BYTES else []
    try:
        document = json.loads(graded.results, parse_constant=reject_constant)
    except ValueError as error:
        return [*problems, f"results.json is not valid: {str(error)[:300]}"]
    if invalid := gradescope_schema.problem(document):
        return [*problems, f"results.json is not valid: {invalid[:300]}"]
    if document["score"] != sum(test["score"] for test in document["tests"]):
        problems.append(f"the score {document['score']} is not the sum of the tests' scores")
    problems += unclean(document["output"], "the results' output")
    for test in document["tests"]:
        if len(test["output"]) > writers.MAX_TEST_OUTPUT:
            problems.append(f"{test['name']}: output of {len(test['output'])} characters")
        problems += unclean(test["output"], f"{test['name']}'s output")
    problems += unclean(graded.summary, "summary.md")
    return problems


def item_problems(graded: Graded, expected: dict[str, str], feedback: str) -> list[str]:
    """Each item of each function: the honest score and status, and the feedback pattern for a failure."""
    try:
        tests = {test["name"]: test for test in json.loads(graded.results)["tests"]}
    except ValueError:
        return []  # results_problems says why
    problems = []
    for key, outcome in expected.items():
        items = expected_items(key)
        if not items:
            problems.append(f"{key}: no such item in the rubric")
        for item in items:
            test = tests.get(item.name)
            if test is None:
                problems.append(f"{item.name}: not in results.json")
                continue
            score, status, output = test["score"], test["status"], test["output"]
            if outcome == FULL and (score != item.points or status != "passed"):
                problems.append(
                    f"{item.name}: {score}/{item.points} ({status}); honest work earns full marks:\n{output}"
                )
            if outcome == ZERO and (score != 0 or status != "failed"):
                problems.append(f"{item.name}: {score}/{item.points} ({status}); it honestly earns 0:\n{output}")
            if outcome == ZERO and feedback and status == "failed" and not re.search(feedback, output):
                problems.append(f"{item.name}: the output does not match {feedback!r}:\n{output[:600]}")
    return problems


def refusal_problems(graded: Graded) -> list[str]:
    """A refused grading: exit 2 (or IsolationRequired), the reason in results.json, every item at 0."""
    if not graded.refused:
        return [f"it was graded, but this tier must refuse under --require-isolation (isolation: {graded.isolation})"]
    try:
        document = json.loads(graded.results)
    except ValueError:
        return ["no results.json was written for the refusal"]
    problems = [] if "isolation required but not available" in document["output"] else ["results.json has no reason"]
    if document["score"] != 0 or document["extra_data"].get("isolation_required") is not True:
        problems.append(f"a refusal scored {document['score']} or did not record the requirement")
    return problems


def problems(attack: Attack, graded: Graded, expected: Expected) -> list[str]:
    """Everything wrong with how the grading treated `attack`, in a tier that gives `expected`."""
    group = GROUPS[attack.group]
    found = [f"grading did not complete: {graded.error}"] if graded.error else []
    if expected.refused:
        found += refusal_problems(graded)
    elif graded.refused:
        found.append(f"the grading refused to run: {graded.refused}")
    else:
        found += item_problems(graded, attack.expected, attack.feedback)
        with contextlib.suppress(ValueError, KeyError):
            seconds = json.loads(graded.results)["execution_time"]
            if seconds > group.promised_seconds():
                found.append(f"grading took {seconds:.1f} s, past the grader's cap of {group.promised_seconds():g} s")
    found += results_problems(graded)
    found += left_behind_problems(graded) if not (expected.refused or graded.refused or graded.error) else []
    if group.cli:
        found += unclean(graded.stdout, "what `autograde grade` printed")
    traces = graded.traces.get(attack.name, []) + graded.traces.get("", [])
    found += [f"outside the grading directory: {trace} (isolation: {graded.isolation})" for trace in traces]
    return found


def preload_grader(warm: str | None = None) -> None:
    """What grade-all's fork server imports once before its gradings (roster.server_preload), each pool
    process too (were it the real torch._dynamo, it makes its cache folder in the grader's TMPDIR then,
    not in a grading's); `warm`: the run's zygote, which every grading of the pool asks, as grade-all's do."""
    for name in preloads():
        importlib.import_module(name)
    zygote.use(warm)


class Gradings:
    """The gradings a test module needs, each done once, two at a time, the slowest first.

    `support.grade` runs in a small pool of processes (pytest's own process never holds a grader an
    attack could reach), `autograde grade` in a subprocess; a thread per grading then looks for what
    the attacks left behind as soon as it ends. The pool (each process imports the grader, torch
    included) is started with the first grading that needs it: none of test_tiers' does.
    """

    def __init__(self, folders: Callable[[str], Path], run: Path) -> None:
        self.folders = folders  # a fresh folder for a name
        self.run = run  # the folder every process of the run shares: a grading in a tier is made once there
        self.futures: dict[tuple[str, str], Future[Graded]] = {}
        self.pool: Any = None
        self.warm: zygote.Zygote | None = None  # the pool's, as a grade-all run's: one attack after another
        self.threads = ThreadPoolExecutor(PARALLEL_GRADINGS)

    def start(self, group: str, tier: Tier | None = None) -> Future[Graded]:
        tier = tier or in_the_root_tier(group)
        key = (tier.name if tier else "", group)
        if key not in self.futures:
            if tier is None and not GROUPS[group].cli and self.pool is None:
                context = multiprocessing.get_context("spawn")  # no fork of a process that already runs torch threads
                self.warm = run_zygote()
                address = self.warm.address if self.warm is not None else None
                self.pool = context.Pool(PARALLEL_GRADINGS, initializer=preload_grader, initargs=(address,))
            if tier is None:
                folder = self.folders(group)
            else:
                work = work_folder(self.folders(tier.name.replace(" ", "-")), tier)
                folder = work_folder(work / group, tier)
            self.futures[key] = self.threads.submit(self.make, group, folder, tier)
        return self.futures[key]

    def make(self, group: str, folder: Path, tier: Tier | None) -> Graded:
        """The group's grading as this process runs; in a tier, made once per run (unused here if made elsewhere)."""
        if tier is None:
            return run_group(GROUPS[group], folder, self.pool, None)
        name = f"attack-{tier.name.replace(' ', '-')}-{group}"
        return shared(self.run, name, lambda: run_group(GROUPS[group], folder, self.pool, tier))

    def __call__(self, group: str, tier: Tier | None = None) -> Graded:
        return self.start(group, tier).result()

    def close(self) -> None:
        for pending in self.futures.values():
            pending.cancel()
        wait(list(self.futures.values()))
        self.threads.shutdown()
        if self.pool is not None:
            self.pool.terminate()  # a grading still running (one that hung) goes with it
        if self.warm is not None:
            self.warm.close()


def in_the_root_tier(group: str) -> Tier | None:
    """The root tier, when this process is in it, the tiers can be produced and test_tiers grades the group
    there as deployed: this process's grading of the group is then that one (None: graded here, editable)."""
    root = TIERS["root"]
    return root if root == HERE and not possible() and group in TIER_GROUPS["root"] else None


def selected(session: Any) -> list[tuple[Tier | None, str]]:
    """The gradings the session's selected tests need, (tier or None, group), the slowest groups first."""
    found = []
    for item in session.items:
        params = item.callspec.params if hasattr(item, "callspec") else {}
        if isinstance(params.get("attack"), Attack):
            found.append((params.get("tier"), params["attack"].group))
    found = list(dict.fromkeys(found))
    return sorted(found, key=lambda key: SLOWEST_FIRST.index(key[1]) if key[1] in SLOWEST_FIRST else len(SLOWEST_FIRST))


def case(attack: Attack, tier: Tier | None = None) -> Any:
    """A test parameter for `attack` (in `tier`), expected to fail while the grader does not defend it."""
    marks = [pytest.mark.xfail(strict=True, reason=attack.xfail)] if attack.xfail else []
    if tier is None:
        return pytest.param(attack, id=attack.name, marks=marks)
    return pytest.param(tier, attack, id=f"{tier.name.replace(' ', '-')}-{attack.name}", marks=marks)

"""The suite's own machinery: what is shared between its processes, and which test is which kind of work."""

import itertools
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import attack_suite as suite
import longest_first
import markers
import once_per_run
import pytest
import tiers
from support import ROOT, SOLUTIONS

HELPERS = ROOT / "tests" / "helpers"
HANG_GUARD = 120  # seconds: far beyond what either step takes, so only a deadlock reaches it


def python(code: str, cwd: Path) -> subprocess.Popen:
    """A child interpreter with the helpers importable, running `code`."""
    env = {"PYTHONPATH": f"{HELPERS}:{ROOT}", "PATH": "/usr/bin:/bin"}
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env, stdout=subprocess.PIPE)


def test_a_deployed_folder_in_use_by_one_process_is_given_to_another_without_waiting_for_the_first_to_exit(tmp_path):
    holder = python(
        f"""
        import sys, time
        from pathlib import Path
        import deployed
        deployed.CACHE = Path({str(tmp_path)!r})
        deployed.shared("venv", lambda folder: (folder.mkdir(), (folder / deployed.READY).write_text("")))
        print("made", flush=True)
        time.sleep({HANG_GUARD * 2})  # still using it, as a test process does until the session ends
        """,
        tmp_path,
    )
    try:
        assert holder.stdout.readline() == b"made\n"
        second = python(
            f"""
            from pathlib import Path
            import deployed
            deployed.CACHE = Path({str(tmp_path)!r})
            print(deployed.shared("venv", lambda folder: 1 / 0).name)  # ready: never made again
            """,
            tmp_path,
        )
        output, _ = second.communicate(timeout=HANG_GUARD)
        assert (second.returncode, output) == (0, b"venv\n")
    finally:
        holder.kill()
        holder.wait()


def test_a_value_shared_once_per_run_is_made_by_the_first_process_that_asks_and_read_by_the_others(tmp_path):
    code = f"""
        from pathlib import Path
        import once_per_run
        folder = Path({str(tmp_path)!r})
        def make():
            with open(folder / "made", "a") as log:
                log.write("x")
            return {{"answer": 42}}
        print(once_per_run.shared(folder, "value", make)["answer"])
        """
    children = [python(code, tmp_path) for _ in range(3)]
    outputs = [child.communicate(timeout=HANG_GUARD)[0] for child in children]
    assert outputs == [b"42\n"] * 3
    assert (tmp_path / "made").read_text() == "x"
    assert once_per_run.shared(tmp_path, "value", lambda: 1 / 0) == {"answer": 42}


def item(path: str, *fixtures: str) -> SimpleNamespace:
    return SimpleNamespace(path=ROOT / path, fixturenames=fixtures)


def test_it_marks_a_test_by_its_folder_and_the_gradings_it_reads():
    assert markers.kinds(item("tests/corpus/test_corpus.py", "graded")) == ["corpus"]
    assert markers.kinds(item("tests/corpus/test_corpus.py", "public_runs", "graded")) == ["corpus"]
    assert markers.kinds(item("tests/corpus/test_corpus.py")) == []  # reads its files only: the fast loop
    assert markers.kinds(item("tests/attacks/test_tiers.py", "gradings")) == ["attacks"]
    assert markers.kinds(item("tests/autograder/grading/test_writers.py", "reference_result")) == ["gradings"]
    # a fixture of the same name elsewhere is another thing (the nbgrader course's gradings)
    assert markers.kinds(item("tests/autograder/release/test_nbgrader_course.py", "graded")) == []


def test_every_kind_of_long_work_is_a_registered_marker_that_also_means_slow():
    registered = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    for kind in (*markers.LONG, "slow"):
        assert f'"{kind}: ' in registered, kind
    assert set(markers.BY_FIXTURE.values()) <= set(markers.LONG)


@pytest.mark.deployed  # the tier's user runs the deployed grader's interpreter
def test_a_tiers_command_starts_in_its_work_folder_and_reaches_the_reference_from_a_checkout_others_cannot_enter(
    tmp_path, monkeypatch
):
    """A clone in `mktemp -d` (mode 700): neither the caller's folder nor the checkout's solutions/ is open
    to the tier's user, yet the tier starts in its work folder and reads the reference, as a grader's machine
    lets its grader (a tier that hides the reference must do it by its sandbox)."""
    tiers.require()
    closed = tmp_path / "closed"  # where the checkout sits
    (closed / "solutions").mkdir(parents=True)
    closed.chmod(0o700)
    shutil.copyfile(SOLUTIONS / "padding.py", closed / "solutions" / "padding.py")
    monkeypatch.setattr(tiers, "SOLUTIONS", closed / "solutions")
    monkeypatch.chdir(closed)  # the test's own folder, which the tier's user may not enter
    tier = tiers.TIERS["fallback"]
    work = tiers.work_folder(tmp_path / "work", tier)
    show = "import os, sys; print(os.getcwd()); print(os.getuid()); print(len(open(sys.argv[1]).read()))"
    argv = [str(tiers.python()), "-c", show, str(closed / "solutions" / "padding.py")]
    command, environment = tiers.command(tier, argv, work), tiers.environment(tier, work)
    done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=HANG_GUARD)
    assert done.returncode == 0, done.stderr
    cwd, user, length = done.stdout.split()
    assert (cwd, int(user)) == (str(work), tiers.USER_ID)
    assert int(length) == len((SOLUTIONS / "padding.py").read_text())


def test_an_attack_groups_grading_in_a_tier_is_made_once_per_run_and_read_by_every_module_that_asks(
    tmp_path, monkeypatch
):
    """test_attacks and test_tiers share the root tier's gradings where this process is root: one grading each."""
    made, numbers = [], itertools.count()

    def run_group(group, folder, pool, tier):
        made.append((group.name, tier and tier.name, pool))
        return suite.Graded(results=f"{group.name} in {tier and tier.name}")

    monkeypatch.setattr(suite, "run_group", run_group)
    monkeypatch.setattr(suite, "HERE", tiers.TIERS["root"])
    monkeypatch.setattr(suite, "possible", lambda: "")  # the tiers can be produced

    def folders(name: str) -> Path:
        folder = tmp_path / f"{name}{next(numbers)}"
        folder.mkdir()
        return folder

    attacks, by_tier = suite.Gradings(folders, tmp_path), suite.Gradings(folders, tmp_path)
    try:
        assert attacks("thresholds").results == "thresholds in root"  # as this process runs: the root tier
        assert by_tier("thresholds", tiers.TIERS["root"]).results == "thresholds in root"
        assert by_tier("thresholds", tiers.TIERS["docker"]).results == "thresholds in docker"
        assert made == [("thresholds", "root", None), ("thresholds", "docker", None)]  # no pool started for them
        monkeypatch.setattr(suite, "possible", lambda: "no root")  # elsewhere: graded as this process runs
        assert suite.in_the_root_tier("thresholds") is None
    finally:
        attacks.close()
        by_tier.close()


def test_the_suite_and_every_process_it_starts_keep_their_bytecode_whatever_the_machine_says(tmp_path):
    assert "PYTHONDONTWRITEBYTECODE" not in os.environ and not sys.dont_write_bytecode
    (tmp_path / "compiled_once.py").write_text("VALUE = 1\n")
    child = subprocess.run(
        [sys.executable, "-c", "import compiled_once, sys; print(sys.dont_write_bytecode)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
    )
    assert child.stdout.strip() == "False", child.stderr
    assert list((tmp_path / "__pycache__").glob("compiled_once.*.pyc")), "the child compiled it and kept nothing"


def test_the_next_free_process_takes_the_module_that_took_longest_and_one_never_recorded_before_any():
    queue = longest_first.LongestFirst({"a.py": 1.0, "b.py": 30.0, "c.py": 30.0})
    for scope in ("a.py", "b.py", "new.py", "c.py"):  # xdist's order: by number of tests
        queue[scope] = {f"{scope}::test": False}
    order = [queue.popitem(last=False)[0] for _ in range(len(queue))]
    assert order == ["new.py", "b.py", "c.py", "a.py"]  # never recorded: first; equal: as they came


def test_a_run_hands_its_modules_out_longest_first_by_the_last_record_and_records_its_own(tmp_path):
    log = tmp_path / "order"

    def module(count: int) -> str:
        """`count` tests that write their module's name to the log, the last sleeping 0.2 s."""
        write = f"open({str(log)!r}, 'a').write(__name__.split('.')[-1] + ' ')"
        return "import time\n" + "".join(
            f"def test_{n}():\n    {write}\n    time.sleep({0.2 if n == count - 1 else 0})\n" for n in range(count)
        )

    # xdist alone would start with test_many: it has the most tests
    for name, count in (("test_few", 2), ("test_many", 4), ("test_new", 2)):
        (tmp_path / f"{name}.py").write_text(module(count))
    (tmp_path / "conftest.py").write_text(
        "import longest_first\n\ndef pytest_configure(config):\n    longest_first.register(config)\n"
    )
    record = tmp_path / ".pytest_cache" / "v" / longest_first.RECORD
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"": {"test_few.py": 10.0, "test_many.py": 1.0}}))  # test_new: never recorded
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "1", "--dist", "loadscope", "-q"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(HELPERS), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    ran = log.read_text().split()
    assert [name for name, _ in itertools.groupby(ran)] == ["test_new", "test_few", "test_many"], ran
    seconds = json.loads(record.read_text())[""]
    assert set(seconds) == {"test_few.py", "test_many.py", "test_new.py"}
    assert seconds["test_few.py"] != 10.0 and all(value >= 0.2 for value in seconds.values())  # each sleeps 0.2 s
